"""The labelled questions every eval reads (``questions-dev.jsonl``, format of the eval README)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from gmprep.common.errors import GmprepError


class Question(BaseModel):
    """One labelled question."""

    id: str
    kind: str
    question: str
    history: list[dict] = Field(default_factory=list)
    gold: list[str] = Field(default_factory=list)
    gold_mode: str = "any"

    def search_text(self) -> str:
        """What is searched: the question, after its history for follow-ups."""
        if not self.history:
            return self.question
        turns = [str(t.get("content", "")) for t in self.history]
        return "\n".join([*turns, self.question])


def load_questions(path: Path, kinds: list[str] | None = None, limit: int | None = None,
                   sample: int | None = None) -> list[Question]:
    """Questions from a JSON Lines file, filtered by kind, then evenly sampled and/or cut to ``limit``.
    A missing file or a malformed line is an error naming it."""
    if not path.is_file():
        raise GmprepError(f"questions file {path} not found")
    qs = []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                qs.append(Question.model_validate_json(line))
            except ValueError as exc:
                raise GmprepError(f"{path}:{lineno}: not a question line ({exc})") from exc
    if kinds:
        qs = [q for q in qs if q.kind in kinds]
    if sample and sample < len(qs):
        # evenly spaced: the file is grouped by kind, so every kind keeps its share
        qs = [qs[int(i * len(qs) / sample)] for i in range(sample)]
    return qs[:limit] if limit else qs
