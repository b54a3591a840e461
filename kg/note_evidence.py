"""What the rest of a note says about one candidate: the note's other candidates for the same entry,
and for entries of the same type ("one sense per discourse", Gale, Church and Yarowsky 1992).

A GM who writes a stat block for a zombie, or lists the encounter's creatures, means the rule when the
narration below says "the zombies"; a note whose every "contract" is everyday prose means none of them.
The note stage (``kg.mention_scorer.NoteStage``) can read, besides a candidate's own logit and its
section's mean, these numbers, each computed from the scorer's logits of the note's candidates (never
from labels), in one pass grouped by entry id and by entry type (linear in the number of candidates):

- ``entry_gap``: the highest logit among the note's *other* candidates for the same entry, minus the
  candidate's own (0 when the entry occurs once): a confident mention elsewhere lifts an unsure one, and
  a lone confident mention among unsure ones of its entry is read a little lower;
- ``type_mean``: the mean logit of the note's candidates of the same entry type, other entries only
  (0 when there are none): a note full of confident creatures makes one more creature likelier.

Which of them a model uses, and their weights, are learned leaving one GM out
(``gmprep hover calibrate --note-evidence``); a model without them behaves as before.
"""

from __future__ import annotations

from collections.abc import Sequence

EVIDENCE = ("entry_gap", "type_mean")
CLIP = 8.0  # logits beyond this say nothing more (and a confidence rounded to 1.0 is not infinitely sure)


def note_evidence(
    names: Sequence[str], entries: Sequence[str], types: Sequence[str], zs: Sequence[float]
) -> list[tuple[float, ...]]:
    """For each candidate of one note (its entry id, entry type and logit), the values of the evidence
    ``names`` (each in ``EVIDENCE``), in that order. Linear in the number of candidates."""
    unknown = [n for n in names if n not in EVIDENCE]
    if unknown:
        raise ValueError(f"unknown note evidence: {', '.join(unknown)}")
    if not names:
        return [() for _ in zs]
    zc = [max(-CLIP, min(CLIP, z)) for z in zs]
    # per entry: the best logit, where it is, the second best, the sum and the count
    best: dict[str, list] = {}
    by_type: dict[str, list[float]] = {}
    for i, (e, t, z) in enumerate(zip(entries, types, zc, strict=True)):
        b = best.get(e)
        if b is None:
            best[e] = [z, i, None, z, 1]
        else:
            if z > b[0]:
                b[2], b[0], b[1] = b[0], z, i
            elif b[2] is None or z > b[2]:
                b[2] = z
            b[3] += z
            b[4] += 1
        acc = by_type.setdefault(t, [0.0, 0.0])
        acc[0] += z
        acc[1] += 1.0
    out: list[tuple[float, ...]] = []
    for i, (e, t, z) in enumerate(zip(entries, types, zc, strict=True)):
        b = best[e]
        values = []
        for n in names:
            if n == "entry_gap":
                other_max = b[2] if b[1] == i else b[0]
                values.append(0.0 if other_max is None else other_max - z)
            else:  # type_mean: same type, other entries
                ts, tn = by_type[t]
                rest = tn - b[4]
                values.append((ts - b[3]) / rest if rest else 0.0)
        out.append(tuple(values))
    return out
