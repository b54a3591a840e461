"""Offline generation of the question index's data: for each rules-heavy entry, the questions a GM or
player would ask at the table that the entry answers, in their own words rather than the rule's name.

A reproducible job (``gmprep questions generate``): entries in a fixed order (type, then id), fixed
seed and temperature, one JSON line per entry appended to the output as soon as it is written (so a
killed run resumes where it stopped: entries already in the file are skipped), several entries in
flight at once (llama.cpp slots, ``n_parallel``). A manifest beside the output records the model's
sha256, the prompt, the seed and what the run cost.
"""

from __future__ import annotations

import hashlib
import re
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pydantic import BaseModel, Field

from gmprep.common.jsonlines import json_objects, open_text
from gmprep.core.llm.base import ChatMessage, LLMBackend
from gmprep.kg.models import Node

# Entry types whose text *is* a rule a situation at the table calls on (what a GM asks about without
# knowing the name): actions, conditions, rules pages, hazards, class features. Feats, spells, items,
# creatures are mostly found by name; the ~270 entries of these types are what a CPU run can cover.
RULE_TYPES = ("action", "condition", "rule", "hazard", "class-feature")
QUESTIONS_PER_ENTRY = 4
PASSAGE_CHARS = 700

SYSTEM = (
    "You help index a Pathfinder 2e rules reference. Given one rules entry, write questions that a game "
    "master or a player would ask at the table, describing what is happening in the game in plain words, "
    "that this entry answers. Do NOT use the entry's name or its game terms in the questions; describe the "
    "situation instead. One question per line, no numbering, nothing else."
)
USER = "Entry: {name} ({type})\n{text}\n\nWrite {n} different questions, one per line."
PROMPT_VERSION = "situation-questions-v1"


class GeneratedQuestions(BaseModel):
    """One output line: the questions written for one entry."""

    node_id: str
    name: str
    type: str
    questions: list[str] = Field(default_factory=list)
    tokens: int = 0


class GenerationManifest(BaseModel):
    """What produced an output file, and what it cost."""

    model: str
    model_sha256: str
    prompt_version: str = PROMPT_VERSION
    system: str = SYSTEM
    user_template: str = USER
    seed: int
    temperature: float
    max_tokens: int
    types: list[str]
    entries_total: int = 0
    entries_done: int = 0
    questions: int = 0
    completion_tokens: int = 0
    runs: list[dict] = Field(default_factory=list)  # one per invocation: wall_s, cpu_s, entries, tokens/s


def select_entries(nodes: Iterable[Node], types: Sequence[str] = RULE_TYPES) -> list[Node]:
    """The entries to write questions for, in a fixed order (type, then id) so runs are reproducible."""
    wanted = set(types)
    picked = [n for n in nodes if n.kind == "entry" and n.type in wanted and (n.text or n.summary).strip()]
    return sorted(picked, key=lambda n: (list(types).index(n.type), n.node_id))


def messages_for(node: Node, n: int = QUESTIONS_PER_ENTRY) -> list[ChatMessage]:
    text = (node.text or node.summary).strip()
    if len(text) > PASSAGE_CHARS:
        text = text[:PASSAGE_CHARS].rsplit(" ", 1)[0] + " ..."
    return [ChatMessage(role="system", content=SYSTEM),
            ChatMessage(role="user", content=USER.format(name=node.name, type=node.type, text=text, n=n))]


_LEAD = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)]|Q\d*[:.])\s*")


def parse_questions(text: str, limit: int = QUESTIONS_PER_ENTRY) -> list[str]:
    """The question lines of a reply: numbering and bullets stripped, duplicates and non-questions dropped."""
    out: list[str] = []
    for line in text.splitlines():
        q = _LEAD.sub("", line).strip().strip('"').strip()
        if len(q) < 12 or not q.endswith("?") or q in out:
            continue
        out.append(q)
    return out[:limit]


def read_done(path: Path) -> dict[str, GeneratedQuestions]:
    """Entries already in an output file (a torn last line from a killed run is ignored)."""
    done: dict[str, GeneratedQuestions] = {}
    if not path.exists():
        return done
    for obj in json_objects(path):
        try:
            row = GeneratedQuestions.model_validate(obj)
        except ValueError:
            continue
        done[row.node_id] = row
    return done


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(8 << 20), b""):
            h.update(block)
    return h.hexdigest()


def generate(
    backend: LLMBackend,
    nodes: Sequence[Node],
    out: Path,
    manifest: GenerationManifest,
    *,
    limit: int | None = None,
    parallel: int = 1,
    on_progress: Callable[[GeneratedQuestions], None] | None = None,
) -> GenerationManifest:
    """Write questions for the ``nodes`` not yet in ``out`` (append, one line each), at most ``limit``
    of them in this run; update and save ``manifest`` (``<out>.manifest.json``) after each entry.

    Decoding is greedy (temperature 0) by default, so the same model and prompt give the same questions
    (``seed`` is recorded for sampled runs); entries are processed ``parallel`` at a time (one llama.cpp slot each)."""
    import asyncio
    import resource

    done = read_done(out)
    todo = [n for n in nodes if n.node_id not in done]
    if limit is not None:
        todo = todo[:limit]
    manifest.entries_total = len(nodes)
    lock = threading.Lock()
    started, cpu0 = time.perf_counter(), _cpu_s(resource)
    run: dict[str, float] = {"entries": 0, "completion_tokens": 0, "parallel": parallel}
    manifest.runs.append(run)
    mpath = manifest_path(out)
    out.parent.mkdir(parents=True, exist_ok=True)

    def one(node: Node) -> None:
        completion = asyncio.run(backend.complete(messages_for(node), max_tokens=manifest.max_tokens,
                                                  temperature=manifest.temperature))
        row = GeneratedQuestions(node_id=node.node_id, name=node.name, type=node.type,
                                 questions=parse_questions(completion.text), tokens=completion.usage.completion)
        with lock:
            # gzip members concatenate: appending one small member per line keeps the file valid
            # after a kill between entries.
            with open_text(out, "at") as f:
                f.write(row.model_dump_json() + "\n")
            done[row.node_id] = row
            run["entries"] += 1
            run["completion_tokens"] += row.tokens
            wall = time.perf_counter() - started
            run["wall_s"] = round(wall, 1)
            run["cpu_s"] = round(_cpu_s(resource) - cpu0, 1)
            run["tokens_per_s"] = round(run["completion_tokens"] / wall, 2) if wall else 0.0
            manifest.entries_done = sum(1 for n in nodes if n.node_id in done)
            manifest.questions = sum(len(r.questions) for r in done.values())
            manifest.completion_tokens = sum(r.tokens for r in done.values())
            mpath.write_text(manifest.model_dump_json(indent=2) + "\n", encoding="utf-8")
            if on_progress:
                on_progress(row)

    with ThreadPoolExecutor(max_workers=max(1, parallel)) as pool:
        for fut in [pool.submit(one, n) for n in todo]:
            fut.result()
    if not todo:
        manifest.entries_done = sum(1 for n in nodes if n.node_id in done)
        mpath.write_text(manifest.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return manifest


def manifest_path(out: Path) -> Path:
    name = out.name.removesuffix(".gz").removesuffix(".jsonl")
    return out.with_name(f"{name}.manifest.json")


def load_manifest(out: Path) -> GenerationManifest | None:
    path = manifest_path(out)
    if not path.exists():
        return None
    return GenerationManifest.model_validate_json(path.read_text(encoding="utf-8"))


def _cpu_s(resource) -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
