"""How well the context model reads candidates the hover decision never lets it correct (issue 11, helper hov34;
docs/hover.md, "Can the context model admit what the name index vetoes or the scorer buries?").

Classes: ``far`` (scored, not shown, below the band the context correction can cross), ``veto-*`` (matched, then
vetoed by the name index: lowercase skills, a class's trait word), and with ``new`` two classes the index never
proposes: ``prose-title`` (a rules-prose section's title, "initiative") and ``head-verb`` (the first word of a
multi-word action or spell alone, "recalled" -> Recall Knowledge), each where the phrase names one entry of its class.
Labels: tuning split (labels/tune.jsonl only) rule / wrong / noise / unjudged (the gold is exhaustive, so unjudged is
no rule); notes-dev rule / null / wrong (spans no label touches are left out).

    python scripts/ctx_reach.py measure OUT.jsonl [tune|dev|both] [new]   # the shipped model's logit ("ctx")
    python scripts/ctx_reach.py export DIR                                 # DIR/extra_spans.jsonl.gz, every class
    python scripts/ctx_reach.py report FILE [KEY]                          # per class and GM: AUC, P at cut-offs

``export`` writes the tuning spans of every class for ``training/mention_context_folds.py --extra``: each GM's fold
model (trained without that GM) scores them, so ``report extra_scores.jsonl.gz both3`` reads them out of GM. The
shipped model's own logit on the tuning notes is in-sample (it was trained on every judged candidate there).
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT / "bench" / "data" / "real-notes"
DEV = ROOT.parent / "shared" / "eval" / "notes-dev"


def candidates(scanner, text: str):
    """(class, start, end, type, name, node_id, staged conf, heuristic) of every vetoed or far-below candidate."""
    from gmprep.kg.mention_scorer import logit
    from gmprep.kg.note_scan import staged
    from gmprep.kg.prose import front_matter_end, reference_labels, split_chunks

    out = []
    scored = scanner.candidates(text)
    stage = getattr(scanner.scorer, "note_stage", None)
    weights = getattr(scanner.scorer, "note_weights", None)
    confs = staged(stage, scored, weights)
    band = scanner.context.band
    thr, floor = logit(scanner.threshold), logit(scanner.floor)
    for sc, c in zip(scored, confs, strict=True):
        z = logit(c)
        mark = floor if sc.heuristic else thr
        if z < mark - band and not (sc.heuristic and (sc.mention.value is not None or sc.mention.form in ("legacy", "workspace"))):
            out.append(("far", sc.start, sc.end, sc.etype, sc.mention.name, sc.mention.node_id, c, sc.heuristic))
    refs = reference_labels(text)
    fm = front_matter_end(text)
    for a, b in split_chunks(text):
        chunk = scanner._chunk(text[a:b], refs, a == 0 and fm > 0)
        for m in chunk.matches:
            if m.veto:
                kind = "veto-skill" if m.chosen.type == "skill" else "veto-" + m.chosen.type
                out.append((kind, a + m.start, a + m.end, m.chosen.type, m.chosen.name, m.chosen.node_id, 0.0, False))
    return out


def label_real(doc_labels, start, end, node_id):
    hit = [j for j in doc_labels if j["start"] < end and start < j["end"]]
    if any(j["label"] == "rule" and node_id in j.get("ids", []) for j in hit):
        return "rule"
    if any(j["label"] == "rule" for j in hit):
        return "wrong"
    if hit:
        return "noise"
    return "unjudged"


def rows_for(which: str, new: bool) -> list[dict]:
    from gmprep.common.settings import HoverSettings
    from gmprep.kg.mention_context import pair
    from gmprep.kg.mention_scorer_train import _note_groups
    from gmprep.kg.note_scan import NoteScanner, load_scorer
    from gmprep.server.state import RulesBook

    names = RulesBook.from_corpus().names
    scanner = NoteScanner(names, HoverSettings(), load_scorer())
    keys = new_keys() if new else None

    def cands(text):
        return new_candidates(scanner, text, keys) if keys else candidates(scanner, text)

    rows = []
    if which in ("tune", "both"):
        sources = [s for s in json.loads((REAL / "sources.json").read_text())["sources"] if s["split"] == "tune"]
        groups = _note_groups(REAL / "labels" / "tune.jsonl")
        labels: dict[str, list] = {}
        for line in (REAL / "labels" / "tune.jsonl").read_text().splitlines():  # the tuning labels only
            if line.strip():
                j = json.loads(line)
                labels.setdefault(j["doc"], []).append(j)
        for s in sources:
            text = (ROOT / ".cache" / "real-notes" / f"{s['id']}.md").read_bytes().decode("utf-8")
            for kind, a, b, et, name, nid, conf, heur in cands(text):
                rows.append({"set": "tune", "gm": groups.get(s["id"], s["gm"]), "doc": s["id"], "class": kind,
                             "start": a, "end": b, "text": text[a:b], "type": et, "name": name, "id": nid,
                             "conf": conf, "heuristic": heur, "label": label_real(labels.get(s["id"], []), a, b, nid),
                             "pair": pair(text, a, b, et, name)})
    if which in ("dev", "both"):
        for md in sorted(DEV.glob("*.md")):
            text = md.read_text(encoding="utf-8")
            starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
            gold = []
            for m in json.loads(Path(str(md) + ".json").read_text())["mentions"]:
                o = starts[m["line"]] + m["character"]
                gold.append((o, o + len(m["text"]), m["gold"]))
            for kind, a, b, et, name, nid, conf, heur in cands(text):
                hit = [g for g in gold if g[0] < b and a < g[1]]
                if not hit:
                    continue
                lab = "rule" if any(g[2] == nid for g in hit) else ("null" if all(g[2] is None for g in hit) else "wrong")
                rows.append({"set": "dev", "gm": "notes-dev", "doc": md.name, "class": kind, "start": a, "end": b,
                             "text": text[a:b], "type": et, "name": name, "id": nid, "conf": conf,
                             "heuristic": heur, "label": lab, "pair": pair(text, a, b, et, name)})
    return rows


def measure(out_path: Path, which: str, new: bool) -> None:
    from gmprep.kg.mention_context import shared_context

    ctx = shared_context()
    assert ctx is not None
    rows = rows_for(which, new)
    logits = ctx.read([tuple(r["pair"]) for r in rows])
    with out_path.open("w", encoding="utf-8") as f:
        for r, z in zip(rows, logits, strict=True):
            r["ctx"] = round(z, 4)
            r["logit"] = round(math.log(max(r["conf"], 1e-6) / max(1 - r["conf"], 1e-6)), 3)
            f.write(json.dumps(r) + "\n")
    print(len(rows), "rows ->", out_path)


def export(folder: Path) -> None:
    import gzip

    folder.mkdir(parents=True, exist_ok=True)
    rows = rows_for("tune", False) + rows_for("tune", True)
    with gzip.open(folder / "extra_spans.jsonl.gz", "wt", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps({"gm": r["gm"], "doc": r["doc"], "class": r["class"], "start": r["start"],
                                "text": r["text"], "label": r["label"], "a": r["pair"][0], "b": r["pair"][1]}) + "\n")
    print(len(rows), "extra spans ->", folder / "extra_spans.jsonl.gz")


def _auc(pos: list[float], neg: list[float]) -> float:
    import bisect

    if not pos or not neg:
        return float("nan")
    neg = sorted(neg)
    s = sum(bisect.bisect_left(neg, p) + 0.5 * (bisect.bisect_right(neg, p) - bisect.bisect_left(neg, p)) for p in pos)
    return s / len(pos) / len(neg)


CUTS = (0.0, 1.0, 2.0, 3.0, 4.0, 5.0)


def _cut(rows: list[dict], key: str, target: float = 0.9, least: int = 5) -> float:
    """The lowest cut-off at which ``rows`` reach ``target`` precision with ``least`` above it (inf: none)."""
    for c in sorted({r[key] for r in rows}):
        above = [r for r in rows if r[key] >= c]
        if len(above) >= least and sum(r["label"] == "rule" for r in above) / len(above) >= target:
            return c
    return float("inf")


def report(path: Path, key: str) -> None:
    """Per class: AUC rule against the rest (unjudged counts as no rule), precision above fixed cut-offs, per GM,
    and a cut-off for precision 0.9 chosen leaving each GM out, applied to that GM (pooled)."""
    import gzip

    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    for cls in sorted({r["class"] for r in rows}):
        for st in sorted({r.get("set", "tune") for r in rows}):
            rs = [r for r in rows if r["class"] == cls and r.get("set", "tune") == st and r.get(key) == r.get(key) and key in r]  # NaN: a fold not run
            if not rs:
                continue
            pos = [r[key] for r in rs if r["label"] == "rule"]
            neg = [r[key] for r in rs if r["label"] != "rule"]
            cuts = []
            for c in CUTS:
                above = [r for r in rs if r[key] >= c]
                cuts.append(f">={c:g} {sum(r['label'] == 'rule' for r in above)}/{len(above)}")
            print(f"{cls} [{st}] n={len(rs)} rule={len(pos)} AUC={_auc(pos, neg):.3f}  " + "  ".join(cuts))
            if st != "tune":
                continue
            tp = fp = 0
            for gm in sorted({r["gm"] for r in rs}):
                g = [r for r in rs if r["gm"] == gm]
                c = _cut([r for r in rs if r["gm"] != gm], key)
                above = [r for r in g if r[key] >= c]
                t = sum(r["label"] == "rule" for r in above)
                tp, fp = tp + t, fp + len(above) - t
                gp = [r[key] for r in g if r["label"] == "rule"]
                gn = [r[key] for r in g if r["label"] != "rule"]
                print(f"    {gm[:34]:34} n={len(g):4} rule={len(gp):3} AUC={_auc(gp, gn):.3f} "
                      f"cut(other GMs)={c:.2f} shown {t}/{len(above)}")
            print(f"    leave-one-GM-out cut-offs, pooled: {tp} rules, {fp} not ({tp / (tp + fp) if tp + fp else float('nan'):.3f})")


def main() -> None:
    cmd = sys.argv[1]
    if cmd == "measure":
        measure(Path(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else "both", "new" in sys.argv[4:])
    elif cmd == "export":
        export(Path(sys.argv[2]))
    elif cmd == "report":
        report(Path(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else "ctx")
    else:
        sys.exit(__doc__)


# ---- candidates the name index never proposes (measured only; run with ``new`` as the class set) ----------------
def new_keys():
    """phrase -> (id, type, name, class) for two never-proposed classes: the books' rules-prose section titles
    (``is_prose``) and the head verb of a multi-word action or spell alone ("identifies" -> Identify Magic),
    each only where the phrase names one entry of its class."""
    from gmprep.ingest.corpus import load_corpus
    from gmprep.kg.names import _verb_forms, name_key

    nodes = [n for n in load_corpus().nodes if n.kind == "entry"]
    keys: dict[tuple[str, ...], set] = {}
    for n in nodes:
        key = name_key(n.name)
        if not key or "(" in n.name:
            continue
        if n.is_prose:
            keys.setdefault(tuple(key), set()).add((n.node_id, n.type, n.name, "prose-title"))
        elif n.type in ("action", "spell") and len(key) > 1 and key[0].isalpha():
            for f in _verb_forms(key[0]) | {key[0]}:
                keys.setdefault((f,), set()).add((n.node_id, n.type, n.name, "head-verb"))
    return {k: next(iter(v)) for k, v in keys.items() if len(v) == 1}


_W = None


def new_candidates(scanner, text: str, keys):
    import re

    from gmprep.kg.prose import front_matter_end, reference_labels, split_chunks

    global _W
    _W = _W or re.compile(r"[A-Za-z][A-Za-z'\u2019\-]*")
    longest = max(len(k) for k in keys)
    refs = reference_labels(text)
    fm = front_matter_end(text)
    out = []
    for a, b in split_chunks(text):
        chunk = scanner._chunk(text[a:b], refs, a == 0 and fm > 0)
        taken = [(m.start, m.end) for m in chunk.matches]
        toks = [(t.start(), t.end(), t.group().lower()) for t in _W.finditer(chunk.prose.text)]
        i = 0
        while i < len(toks):
            hit = None
            for n in range(min(longest, len(toks) - i), 0, -1):
                seg = toks[i:i + n]
                if any(chunk.prose.text[seg[k][1]:seg[k + 1][0]].strip() for k in range(n - 1)):
                    continue
                k = tuple(t[2] for t in seg)
                if k in keys:
                    hit = (n, keys[k])
                    break
            if hit is None:
                i += 1
                continue
            n, (nid, et, name, cls) = hit
            s, e = toks[i][0], toks[i + n - 1][1]
            if not any(x < e and s < y for x, y in taken):
                out.append((cls, a + s, a + e, et, name, nid, 0.0, False))
            i += n
    return out


if __name__ == "__main__":
    main()
