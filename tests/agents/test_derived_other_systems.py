"""Other game systems' rules vocabularies derived from their open sources (helper gap36, issue 10): the shipped file
(``core/agents/data/other-systems-derived.json.gz``, ``scripts/derive_other_systems_terms.py``), its load beside the
hand list, the word-sequence scan that drops the terms the store uses, and the guard's decline with the setting on and
off (``answerability.guard_derived``). On the real test store."""

from __future__ import annotations

import gzip
import json
from importlib import resources

import pytest

from gmprep.common.settings import AnswerabilitySettings
from gmprep.core.answer import answer_question
from gmprep.core.sources import (
    OtherSystemsSource,
    OtherSystemTerm,
    _derived_used,
    _term_regex,
    load_derived_terms,
    load_other_system_terms,
)
from gmprep.kg.legacy import LEGACY_NAMES

# Pathfinder 1e: a spell-like ability is neither a spell nor an innate spell of these books
PF1 = "Does using a spell-like ability provoke an attack of opportunity, and can I cast it defensively?"
# the same term in a question that says it is about Pathfinder 2e: the asker's word for what they look for here
PF2E = "I'm new to PF2e: is there anything like a spell-like ability, or does everything count as a spell?"


def test_the_shipped_file_records_its_sources_and_holds_no_pf2e_name():
    ref = resources.files("gmprep.core.agents") / "data" / "other-systems-derived.json.gz"
    data = json.loads(gzip.decompress(ref.read_bytes()).decode("utf-8"))
    systems = {s["system"] for s in data["sources"]}
    assert {"Dungeons & Dragons 5th Edition", "Pathfinder 1st Edition", "Starfinder (1st Edition)"} <= systems
    for s in data["sources"]:
        assert len(s["commit"]) == 40 and s["repository"].startswith("https://github.com/") and s["licence"]
    terms = {r["term"].lower() for r in data["terms"]}
    assert {"spell-like ability", "casting defensively", "minor crew action", "eldritch invocations"} <= terms
    # composed only of words the held books use widely: their own words put together, not kept
    assert not terms & {"speed bonus", "legendary item", "save bonus", "touch attack"}
    assert not terms & {n.lower() for n in LEGACY_NAMES}  # "attack of opportunity" maps to Reactive Strike
    assert "attacks of opportunity" not in terms and "core rulebook" not in terms  # plural of a legacy name, a title
    # a feat is a named entry of that game, kept however rarely its text uses the name (gap37)
    assert all(r["uses"] >= data["min_uses"] for r in data["terms"] if r.get("kind") != "feat")
    assert all(len(r["term"].split()) > 1 or "-" in r["term"] or len(r["term"]) >= 5 for r in data["terms"])


def test_derived_terms_load_beside_the_hand_list_without_duplicates():
    hand = load_other_system_terms()
    both = load_other_system_terms(derived=True)
    assert both[:len(hand)] == hand and len(both) > len(hand) + 1000
    assert all(t.derived for t in both[len(hand):]) and not any(t.derived for t in hand)
    lowered = [t.term.lower() for t in both]
    assert len(lowered) == len(set(lowered))
    assert len(load_derived_terms()) >= len(both) - len(hand)


class _Node:
    def __init__(self, name: str, text: str, type_: str = "rule"):
        self.name, self.text, self.type = name, text, type_


class _Store:
    def __init__(self, nodes):
        self.nodes = nodes

    def iter_nodes(self, kinds):
        return iter(self.nodes)


def test_the_word_sequence_scan_reads_terms_as_the_patterns_do():
    terms = [OtherSystemTerm(term=t, system="x", derived=True)
             for t in ("touch attack", "spell-like ability", "foot step", "crew action", "swift action")]
    store = _Store([
        _Node("A", "The spell like ability of a creature; a Touch-Attack."),
        _Node("B", "take a 5-foot step"),  # "foot step" joined to "5" by a hyphen: not the term
        _Node("C", "a crew actions list"),  # another word: not the term
        _Node("Swift Action", "", "trait"),  # the trait glossary does not count
    ])
    assert _derived_used(store, terms) == {"touch attack", "spell-like ability"}
    for t in terms:  # the same answer as each term's own pattern, read loose
        rx = _term_regex(t, True)
        assert (t.term in _derived_used(store, [t])) == any(
            rx.search(f"{n.name}\n{n.text}") for n in store.nodes if n.type != "trait")


@pytest.mark.slow
def test_the_guard_declines_another_systems_derived_term_unless_the_question_is_about_pf2e(searcher):
    on = OtherSystemsSource(searcher.store, asked_only=True, loose=True, derived=True)
    off = OtherSystemsSource(searcher.store, asked_only=True, loose=True)
    assert "spell-like ability" in {t.term.lower() for t in on.terms()}
    result = on.retrieve(PF1)
    assert result.verdict == "not_in_books" and "Pathfinder 1st Edition" in result.note, result
    assert off.retrieve(PF1).verdict == "nothing_relevant"
    assert on.retrieve(PF2E).verdict == "nothing_relevant"
    # every active derived term is one no non-trait entry of the store uses
    used = _derived_used(searcher.store, [t for t in load_derived_terms()])
    assert not used & {t.term for t in on.terms() if t.derived}


@pytest.mark.slow
async def test_end_to_end_the_setting_decides(searcher, extractive):
    # the guard's own decline: the other-edition reader (which reads this question as Pathfinder 1e's, ed41) off
    guard = extractive.model_copy(update={"answerability": AnswerabilitySettings(edition_threshold=1.0)})
    ans = await answer_question(PF1, history=[], searcher=searcher, settings=guard)
    assert ans.outcome == "not_in_books" and "spell-like ability" in ans.text.lower(), ans.text
    off = extractive.model_copy(update={"answerability": AnswerabilitySettings(guard_derived=False,
                                                                                edition_threshold=1.0)})
    ans = await answer_question(PF1, history=[], searcher=searcher, settings=off)
    assert ans.outcome != "not_in_books" or "spell-like" not in ans.text.lower(), ans.text


class _MetaStore(_Store):
    """A store double with metadata: counts its scans, keeps what is written."""

    def __init__(self, nodes, read_only: bool = False):
        super().__init__(nodes)
        self.read_only, self.meta, self.scans, self.digests = read_only, {}, 0, {"corpus:pf2e": "a"}

    def iter_nodes(self, kinds):
        self.scans += 1
        return iter(self.nodes)

    def set_meta(self, **values):
        self.meta.update(values)

    def entry_count(self):
        return len(self.nodes)

    def source_digests(self):
        return dict(self.digests)


def test_the_terms_a_store_uses_are_kept_in_its_metadata_and_read_by_the_next_process():
    from gmprep.core import sources

    terms = (OtherSystemTerm(term="touch attack", system="x", derived=True),
             OtherSystemTerm(term="Smite Evil", system="y", case_sensitive=True))
    store = _MetaStore([_Node("A", "a Touch-Attack"), _Node("B", "they smite evil")])
    sources._ACTIVE_CACHE.clear()
    first = [t.term for t, _ in sources._active_terms(store, terms, loose=True)]
    assert first == ["Smite Evil"] and store.scans == 2  # the alternation pass and the word-sequence pass
    sources._ACTIVE_CACHE.clear()  # a new process: nothing in memory, the metadata says which terms are used
    assert [t.term for t, _ in sources._active_terms(store, terms, loose=True)] == first and store.scans == 2
    store.digests["notes:a.md"] = "b"  # an edited note (or a rebuilt corpus): scanned again
    sources._ACTIVE_CACHE.clear()
    assert [t.term for t, _ in sources._active_terms(store, terms, loose=True)] == first and store.scans == 4
    sources._ACTIVE_CACHE.clear()  # other options read other forms: their own scan
    sources._active_terms(store, terms, loose=False)
    assert store.scans == 6
    ro = _MetaStore(store.nodes, read_only=True)  # a read-only store is scanned every time, and nothing is written
    sources._ACTIVE_CACHE.clear()
    assert [t.term for t, _ in sources._active_terms(ro, terms, loose=True)] == first and ro.meta == {}
    sources._ACTIVE_CACHE.clear()


def test_the_kept_terms_survive_reopening_a_real_store(tmp_path):
    from gmprep.core import sources
    from gmprep.kg.store import Store

    terms = (OtherSystemTerm(term="touch attack", system="x", derived=True),)
    with Store.open(tmp_path / "s") as store:
        sources._ACTIVE_CACHE.clear()
        assert [t.term for t, _ in sources._active_terms(store, terms)] == ["touch attack"]
    with Store.open(tmp_path / "s", create=False) as store:
        saved = json.loads(store.meta[sources.USED_META_KEY])
        key = sources._used_key(store, terms, False, False, sorted(store.source_digests().items()))
        assert saved["used"] == [] and saved["key"] == key
    sources._ACTIVE_CACHE.clear()
