"""``gmprep ask`` end to end with the extractive backend: a cited answer, the exchange saved in the
prep file's conversation with its trace, and a follow-up continuing that conversation."""

from __future__ import annotations

import re
import shutil

from gmprep.cli import main
from gmprep.core.conversations import ConversationStore


def test_ask_saves_a_cited_exchange_and_continues_it(store_dir, tmp_path, capsys, monkeypatch):
    store = tmp_path / "store"
    shutil.copytree(store_dir, store, ignore=shutil.ignore_patterns("READY", "*-wal", "*-shm"))
    work = tmp_path / "prep"
    work.mkdir()
    note = tmp_path / "elsewhere" / "session-3.md"  # a prep file outside the working folder is fine too
    note.parent.mkdir()
    note.write_text("# Session 3\n\nThe ogre ambush.\n")
    monkeypatch.chdir(work)

    assert main(["--store", str(store), "ask", "What does the prone condition do?", "--file", str(note),
                 "--backend", "extractive"]) == 0
    captured = capsys.readouterr()
    assert "[pf2e:condition:prone]" in captured.out and "Sources:" in captured.out
    conv_id = re.search(r"conversation ([0-9a-f]{32})", captured.out + captured.err).group(1)

    convs = ConversationStore.in_store(store)
    [summary] = convs.list_for(str(note.resolve()))
    assert summary.id == conv_id and summary.message_count == 2

    assert main(["--store", str(store), "ask", "How do I get up from it?", "--conversation", conv_id,
                 "--backend", "extractive"]) == 0
    out = capsys.readouterr().out
    # the follow-up is read with the conversation: "it" is the prone condition. (Stand was among its five
    # sources until reranker r7 with rerank_prior 0.6 put it 7th: docs/retrieval.md; 4th with prior 0.3.)
    assert "[pf2e:condition:prone]" in out and "Sources:" in out
    assert convs.get(conv_id).message_count == 4


def test_ask_about_an_unknown_conversation_is_a_clear_error(store_dir, capsys):
    assert main(["--store", str(store_dir), "ask", "Bless", "--conversation", "nope", "--no-save",
                 "--backend", "extractive"]) == 1
    assert "no conversation 'nope'" in capsys.readouterr().err
