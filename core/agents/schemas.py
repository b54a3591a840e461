"""Typed outputs of the structured agent steps (the conversation steps; the answer itself is text).

The JSON schema of each model constrains the model's decoding; string lengths are bounded so a weak model cannot ramble until it hits ``max_tokens``."""

from __future__ import annotations

from pydantic import BaseModel, Field


class HistorySelection(BaseModel):
    """Which earlier messages (0-based indices into the history) the new question depends on."""

    relevant: list[int] = Field(max_length=8)


class Rewrite(BaseModel):
    """The latest question rewritten so that it stands alone without the conversation."""

    standalone: str = Field(min_length=3, max_length=300)
