"""``gmprep hover train-scorer|calibrate``: the mention scorer that decides which rule names a note means."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

from gmprep.common.errors import GmprepError


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``hover`` command group."""
    p = sub.add_parser("hover", help="train or calibrate the hover mention scorer")
    hsub = p.add_subparsers(dest="hover_cmd", metavar="ACTION")
    t = hsub.add_parser(
        "train-scorer", help="train the mention scorer on automatically labelled corpus text (needs scikit-learn, wordfreq)"
    )
    t.add_argument("--seed", type=int, default=7)
    t.add_argument("--out", type=Path, default=None, help="model folder (default: the bundled kg/mention_scorer_model)")
    t.add_argument("--limit-entries", type=int, default=None, help="use only N corpus entries drawn by the seed (a quick run)")
    t.add_argument("--max-per-name", type=int, default=30,
                   help="examples kept per (entry, label kind), so frequent names don't dominate (default 30)")
    t.add_argument("--real-labels", type=Path, default=None,
                   help="also learn from judged real notes: a TUNING labels file (never a held-out split)")
    t.add_argument("--real-notes", type=Path, default=None, help="folder with those notes' text as <doc>.md")
    t.add_argument("--real-weight", type=float, default=0.5,
                   help="the real notes' total weight against the corpus examples' (default 0.5)")
    t.add_argument("--dev-notes", type=Path, default=None,
                   help="labelled notes (X.md + X.md.json) whose mentions must keep hovering at 'normal'")
    t.add_argument("--frame-features", action="store_true",
                   help="learn the local-frame table from the corpus's labels and weigh a lowercase candidate's frame "
                   "(the token before and after it; kg.mention_scorer_train.frame_table); a retrain without it drops "
                   "the table the shipped model's layer weighs (docs/hover.md section 5)")
    t.add_argument("--json", action="store_true", help="print the manifest as JSON")
    t.add_argument("--contextual", type=Path, default=None, metavar="DIR",
                   help="instead: fine-tune the contextual (MiniLM) scorer into DIR and measure it against the "
                        "logistic one leaving one GM out on --real-labels/--real-notes (a TUNING split)")
    t.add_argument("--layers", type=int, default=2, help="contextual: MiniLM layers kept (default 2)")
    t.add_argument("--epochs", type=int, default=2, help="contextual: epochs (default 2)")
    t.add_argument("--per-kind", type=int, default=300, help="contextual: examples per label kind (default 300)")
    t.set_defaults(func=run_train)
    c = hsub.add_parser(
        "calibrate", help="set the hover thresholds from labelled TUNING notes (never a held-out split)"
    )
    c.add_argument("--labels", type=Path, required=True, help="labels JSON lines (doc, start, end, text, label, ids)")
    c.add_argument("--notes", type=Path, required=True, help="folder with the notes' text as <doc>.md")
    c.add_argument("--model", type=Path, default=None, help="model folder (default: the bundled one)")
    c.add_argument("--dev-notes", type=Path, default=None,
                   help="labelled notes (X.md + X.md.json) whose mentions must keep hovering at 'normal'")
    c.add_argument("--note-stage", action="store_true",
                   help="also fit the note stage (a confidence read against its section's) on these notes, "
                        "leaving one GM out to choose the thresholds")
    c.add_argument("--drop-note-stage", action="store_true", help="remove the note stage from the model")
    c.add_argument("--learn-from-notes", action="store_true",
                   help="also fit a residual layer on these judged notes over the corpus model's logit and features "
                   "(folded into the weights; implies --note-stage; kg/mention_residual.py)")
    c.add_argument("--note-evidence", default="", metavar="NAMES",
                   help="also let the note stage read what the rest of the note says about each candidate's entry "
                   "(comma-separated: entry_gap, type_mean; kg/note_evidence.py); off by default")
    c.add_argument("--without-note-numbers", action="store_true",
                   help="with --learn-from-notes: leave the whole-note number shares (mention_scorer.NOTE_FEATURES) "
                   "out of the layer (the held-out run of 2026-11-26 rejected them; docs/hover.md section 5)")
    c.add_argument("--balance-gms", action="store_true",
                   help="with --learn-from-notes: choose the thresholds with every GM's judged spans weighing the same "
                   "(kg.mention_scorer_train.balance_by_gm), not every span")
    c.add_argument("--precision-target", type=float, default=None,
                   help="choose 'normal' (with 'rescue') for the most recall at this precision of what is shown, "
                   "instead of the F-beta (kg.mention_scorer_train.calibrate)")
    c.add_argument("--residual-c", type=float, default=None,
                   help="the layer's inverse L2 strength (default: kg.mention_residual.DEFAULT_C)")
    c.add_argument("--frame-table", action="store_true",
                   help="with --learn-from-notes: give the model the corpus's local-frame table first "
                   "(kg.mention_scorer_train.corpus_frame_table), so the layer can weigh a lowercase candidate's "
                   "frame (feature frame_lower; shipped: docs/hover.md section 5). A model that has the table keeps it")
    c.add_argument("--creature-kinds", action="store_true",
                   help="with --learn-from-notes: give the model the corpus's share of creatures among each trait's "
                   "carriers (kg.mention_scorer_train.creature_kinds), so the layer can tell a lowercase trait that "
                   "names creatures ('the zombies') from one that is a word of the rules ('attack'); features "
                   "creature_kind, creature_kind_lower; off by default (docs/hover.md section 5)")
    c.add_argument("--kind-noun-slot", action="store_true",
                   help="with --creature-kinds (or a model with the table): a singular creature-kind word directly "
                   "followed by a lowercase noun ('humanoid figure') is an adjective, so creature_kind_lower is 0 "
                   "there (mention_scorer.noun_word); measured, not shipped (docs/hover.md section 5)")
    c.add_argument("--gms", default="", metavar="NAMES",
                   help="calibrate on these GMs' judged notes only (comma-separated: a GM's repo as in sources.json, "
                   "or its owner, e.g. Solonarv); default every GM of --labels")
    c.add_argument("--dry-run", action="store_true", help="report only; leave the model file as it is")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=run_calibrate)


def only_gms(labels: Path, names: str, folder: Path) -> Path:
    """A copy of ``labels`` (and the ``sources.json`` that groups its notes by GM) in ``folder`` with only the
    rows of the GMs named (a repo, or its owner); refuses a name that matches no GM."""
    from gmprep.kg.mention_scorer_train import _note_groups

    groups = _note_groups(labels)
    wanted = {n.strip().lower() for n in names.split(",") if n.strip()}
    gm_names = {g: {g.lower(), g.split("/")[0].lower()} for g in set(groups.values())}
    unknown = [n for n in wanted if not any(n in names_ for names_ in gm_names.values())]
    if unknown or not wanted:
        raise GmprepError(f"--gms: no GM named {', '.join(sorted(unknown)) or '(none)'} in {labels}")
    keep = {g for g, names_ in gm_names.items() if names_ & wanted}
    rows = [line for line in labels.read_text(encoding="utf-8").splitlines()
            if line.strip() and groups.get(json.loads(line)["doc"], json.loads(line)["doc"]) in keep]
    out = folder / labels.name
    out.write_text("\n".join(rows) + "\n", encoding="utf-8")
    for src in (labels.parent / "sources.json", labels.parent.parent / "sources.json"):
        if src.exists():
            (folder / "sources.json").write_text(src.read_text(encoding="utf-8"), encoding="utf-8")
            break
    return out


def corpus_text():
    """The bundled corpus as the trainer reads it: graph nodes, raw records, digest."""
    from gmprep.ingest.corpus import corpus_digest, corpus_dir, iter_records, load_corpus
    from gmprep.kg.mention_scorer_train import CorpusText

    folder = corpus_dir()
    errors: list[str] = []
    records = list(iter_records(folder, errors))
    if errors:
        raise GmprepError(f"corpus unreadable: {errors[0]}")
    return CorpusText(nodes=load_corpus(folder).nodes, records=records, digest=corpus_digest(folder))


def run_train(args: argparse.Namespace) -> int:
    """Label, train and save the scorer; print what went in."""
    from gmprep.kg.mention_scorer_train import train_scorer

    if args.limit_entries is not None and args.limit_entries < 10:
        raise GmprepError("--limit-entries must be at least 10")
    command = "gmprep hover train-scorer " + " ".join(shlex.quote(a) for a in sys.argv[3:]) if sys.argv[1:3] == [
        "hover", "train-scorer"] else f"gmprep hover train-scorer --seed {args.seed}"
    if (args.real_labels is None) != (args.real_notes is None):
        raise GmprepError("--real-labels and --real-notes go together")
    real = (args.real_labels, args.real_notes) if args.real_labels is not None else None
    if args.contextual is not None:
        from gmprep.kg.mention_context_train import train_contextual

        report = train_contextual(
            corpus_text(), args.contextual, args.real_labels, args.real_notes, seed=args.seed, per_kind=args.per_kind,
            layers=args.layers, epochs=args.epochs, limit_entries=args.limit_entries or 2000, command=command.strip(),
        )
        print(json.dumps(report, indent=2))
        return 0
    manifest = train_scorer(
        corpus_text(), out_dir=args.out, seed=args.seed, limit_entries=args.limit_entries, max_per_kind_name=args.max_per_name,
        command=command.strip(), real=real, real_weight=args.real_weight, dev_notes=args.dev_notes,
        frame_features=args.frame_features,
    )
    if args.json:
        print(json.dumps(manifest, indent=2))
    else:
        v = manifest["validation"]
        print(
            f"mention scorer saved ({manifest['examples_used']} examples: {manifest['positives']} positive, "
            f"{manifest['negatives']} negative; held-out corpus entries AUC {v.get('val_auc', 'n/a')})"
        )
    return 0


def run_calibrate(args: argparse.Namespace) -> int:
    """Score the labelled spans, choose thresholds per strictness, write them into the model."""
    from gmprep.kg.mention_scorer import MODEL_DIR, MODEL_FILE, MentionScorer, _load
    from gmprep.kg.mention_scorer_train import (
        _note_groups,
        balance_by_gm,
        calibrate,
        dev_ceiling,
        fit_note_stage,
        leave_one_gm_out,
        note_stage_leave_one_gm_out,
        note_stage_out_of_gm,
        pooled,
        pr_at,
        pr_shown,
        score_labelled_spans,
        stage_spans,
    )

    model_dir = Path(args.model or MODEL_DIR)
    model = json.loads((model_dir / MODEL_FILE).read_text(encoding="utf-8"))
    MentionScorer.load(model_dir)  # a one-line error for a missing or malformed model
    labels_given = args.labels
    if args.gms:
        import tempfile

        gm_dir = tempfile.TemporaryDirectory(prefix="gmprep-gms-")
        args.labels = only_gms(args.labels, args.gms, Path(gm_dir.name))
    if args.precision_target is not None and not 0.0 < args.precision_target < 1.0:
        raise GmprepError("--precision-target must be between 0 and 1")
    if args.learn_from_notes:
        args.note_stage = True
    evidence = tuple(n.strip() for n in args.note_evidence.split(",") if n.strip())
    from gmprep.kg.note_evidence import EVIDENCE

    if any(n not in EVIDENCE for n in evidence):
        raise GmprepError(f"--note-evidence: choose from {', '.join(EVIDENCE)}")
    if (args.without_note_numbers or args.balance_gms) and not args.learn_from_notes:
        raise GmprepError("--without-note-numbers and --balance-gms need --learn-from-notes")
    if evidence and not args.note_stage:
        raise GmprepError("--note-evidence needs --note-stage or --learn-from-notes")
    if args.note_stage or args.drop_note_stage:
        model.pop("note_stage", None)
    if args.frame_table and not args.learn_from_notes:
        raise GmprepError("--frame-table needs --learn-from-notes (the layer weighs the frame)")
    if args.creature_kinds and not args.learn_from_notes:
        raise GmprepError("--creature-kinds needs --learn-from-notes (the layer weighs the trait's kind)")
    corpus = corpus_text()
    nodes = corpus.nodes
    if args.creature_kinds:
        from gmprep.kg.mention_scorer_train import creature_kinds

        model["creature_kind"] = creature_kinds(nodes)
    if args.kind_noun_slot:
        if not model.get("creature_kind"):
            raise GmprepError("--kind-noun-slot needs --creature-kinds (or a model with the table)")
        model["creature_kind_noun_slot"] = True
    if args.frame_table:
        from gmprep.kg.mention_scorer_train import corpus_frame_table

        model["frame_logodds"] = corpus_frame_table(corpus)
    groups = _note_groups(args.labels)
    stage_report: dict = {}
    residual: dict = {}
    cands: list = []
    if args.learn_from_notes:
        from gmprep.kg import mention_residual

        res_c = mention_residual.DEFAULT_C if args.residual_c is None else args.residual_c
        if res_c <= 0:
            raise GmprepError("--residual-c must be positive")
        cands = mention_residual.note_candidates(args.labels, args.notes, nodes, model, groups,
                                                 note_features=not args.without_note_numbers)
        layer = mention_residual.fit_residual(cands, res_c)
        model = mention_residual.fold(model, layer)
        model["real_notes"] = {"labels": str(labels_given), "c": res_c, "alpha": round(layer.alpha, 6),
                               "frame_tokens": len(model.get("frame_logodds") or {}),
                               "creature_kinds": len(model.get("creature_kind") or {}),
                               "judged_candidates": sum(x.label is not None for x in cands),
                               "gms": sorted({x.gm for x in cands if x.label is not None})}
    elif "corpus_model" in model and args.note_stage:
        model.pop("real_notes", None)
        model = {k: v for k, v in model.items() if k != "corpus_model"} | {
            k: model["corpus_model"][k] for k in model["corpus_model"]}  # back to the corpus model alone
    if args.note_stage:
        sspans = stage_spans(args.labels, args.notes, nodes, MentionScorer(model), evidence)
        if not sspans or len({s.label for s in sspans}) < 2:
            raise GmprepError("the labels give no rule and noise spans the scorer can read")
        stage = fit_note_stage(sspans, evidence=evidence)
        model["note_stage"] = stage.to_json()
    dev: dict = {}
    normal_cap = rescue_cap = 1.0
    if args.dev_notes is not None:
        # the labelled dev notes keep 0.98 of their mentions at "normal", and every one the rules of
        # thumb accept at "rescue" (below "normal", those show from "rescue" on)
        normal_cap = dev_ceiling(args.dev_notes, nodes, model, 0.98)
        rescue_cap = dev_ceiling(args.dev_notes, nodes, model, 1.0, rescued_only=True)
        dev = {"dev_notes": {"folder": str(args.dev_notes), "recall": 0.98, "ceiling": normal_cap,
                             "rescue_ceiling": rescue_cap}}
    if args.learn_from_notes:
        # the layer, the stage and the thresholds fitted without each GM, applied to that GM; the thresholds
        # are chosen on those out-of-GM scores. The corpus model alone, measured the same way, beside it.
        from gmprep.kg import mention_residual

        res_logo, spans = mention_residual.leave_one_gm_out(cands, res_c, normal_cap, rescue_cap,
                                                            args.precision_target, evidence, args.balance_gms)
        base_model = mention_residual.corpus_model(model)
        base_model["note_stage"] = model["note_stage"]  # only to place the corpus model's own dev-note caps
        base_caps = ((dev_ceiling(args.dev_notes, nodes, base_model, 0.98),
                      dev_ceiling(args.dev_notes, nodes, base_model, 1.0, rescued_only=True))
                     if args.dev_notes is not None else (1.0, 1.0))
        base_logo, base_spans = mention_residual.leave_one_gm_out(cands, None, *base_caps, args.precision_target,
                                                                  evidence, args.balance_gms)
        residual = {"real_notes": model["real_notes"] | {
            "leave_one_gm_out_pooled": dict(zip(("precision", "recall"), pooled(res_logo), strict=True)),
            "corpus_model_alone_pooled": dict(zip(("precision", "recall"), pooled(base_logo), strict=True)),
            "out_of_gm_ranking": mention_residual.ranking(spans),
            "corpus_model_alone_ranking": mention_residual.ranking(base_spans),
            "corpus_model_alone": base_logo}}
        stage_report = {"note_stage": model["note_stage"] | {"leave_one_gm_out": (stage_logo := res_logo)}}
    elif args.note_stage:
        # thresholds are chosen on scores from stages that never saw the GM scored (as train-scorer does)
        spans = note_stage_out_of_gm(sspans, groups, evidence)
        stage_report = {"note_stage": model["note_stage"] | {
            "leave_one_gm_out": (stage_logo := note_stage_leave_one_gm_out(sspans, groups, normal_cap, rescue_cap,
                                                                          evidence))}}
    else:
        spans = score_labelled_spans(args.labels, args.notes, nodes, MentionScorer(model))
    if not spans or len({s.label for s in spans}) < 2:
        raise GmprepError("the labels give no rule and noise spans the scorer can read")
    if args.balance_gms:
        spans = balance_by_gm(spans, {x.doc: x.gm for x in cands})
    thresholds = calibrate(spans, normal_cap, rescue_cap, args.precision_target)
    thresholds["loose"] = min(thresholds["loose"], rescue_cap)
    at: dict[str, dict[str, float]] = {
        k: dict(zip(("precision", "recall", "tp", "fp", "fn"), pr_at(spans, t), strict=True))
        for k, t in thresholds.items() if k != "rescue"
    } | {"shown": dict(zip(("precision", "recall", "tp", "fp", "fn"),
                           pr_shown(spans, thresholds["normal"], thresholds.get("rescue", thresholds["loose"])),
                           strict=True))}
    report = {
        "labels": str(labels_given), "gms": args.gms or "all", "spans": len(spans), "rule_spans": sum(s.label for s in spans),
        "thresholds": thresholds, "at": at,
        # thresholds chosen without each GM, applied to that GM: what a new GM's notes can expect
        "leave_one_gm_out": (logo := stage_logo if args.note_stage
                             else leave_one_gm_out(spans, groups, normal_cap, rescue_cap)),
    } | dev | stage_report | residual
    if not args.dry_run:
        path = model_dir / MODEL_FILE
        model["thresholds"] = thresholds
        path.write_text(json.dumps(model, sort_keys=True), encoding="utf-8")
        man_path = model_dir / "manifest.json"
        manifest = json.loads(man_path.read_text(encoding="utf-8")) if man_path.exists() else {}
        manifest["calibration"] = report | {"command": f"gmprep hover calibrate --labels {args.labels} --notes {args.notes}"
                                                       + (f" --dev-notes {args.dev_notes}" if args.dev_notes else "")
                                                       + (" --note-stage" if args.note_stage else "")
                                                       + (" --learn-from-notes" if args.learn_from_notes else "")
                                                       + (f" --note-evidence {','.join(evidence)}" if evidence else "")
                                                       + (" --without-note-numbers" if args.without_note_numbers else "")
                                                       + (" --frame-table" if args.frame_table else "")
                                                       + (" --creature-kinds" if args.creature_kinds else "")
                                                       + (" --balance-gms" if args.balance_gms else "")
                                                       + (f" --residual-c {args.residual_c}" if args.residual_c else "")
                                                       + (f" --precision-target {args.precision_target}"
                                                          if args.precision_target else "")}
        if args.drop_note_stage:
            manifest["calibration"].pop("note_stage", None)
        man_path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        _load.cache_clear()
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for k, t in thresholds.items():
            a = at.get(k)
            if a is None:
                print(f"{k:6} threshold {t:.4f}: for the matches the rules of thumb accept, below normal")
                continue
            print(f"{k:6} threshold {t:.4f}: precision {a['precision']:.3f} recall {a['recall']:.3f} "
                  f"(tp {a['tp']}, fp {a['fp']}, fn {a['fn']}) on {len(spans)} tuning spans")
        a = at["shown"]
        print(f"shown at normal (with the rules of thumb's matches from {thresholds.get('rescue', thresholds['loose']):.4f}"
              f" and values at any score): precision {a['precision']:.3f} recall {a['recall']:.3f} "
              f"(tp {a['tp']}, fp {a['fp']}, fn {a['fn']})")
        for gm, r in logo.items():
            n = r["shown"]
            print(f"leaving out {gm}: AUC {r['auc']}, normal {r['thresholds']['normal']:.4f} chosen on the others, "
                  f"shown: precision {n['precision']:.3f} recall {n['recall']:.3f} (tp {n['tp']}, fp {n['fp']})")
        if logo:
            prec, rec = pooled(logo)
            print(f"leave one GM out, pooled, shown: precision {prec:.3f} recall {rec:.3f}")
        if residual:
            b = residual["real_notes"]["corpus_model_alone_pooled"]
            print(f"the corpus model alone, same procedure: precision {b['precision']:.3f} recall {b['recall']:.3f}")
            for name, key in (("with the layer", "out_of_gm_ranking"), ("corpus model alone", "corpus_model_alone_ranking")):
                rk = residual["real_notes"][key]
                print(f"out-of-GM scores, {name}: AUC {rk['auc']}, precision at recall "
                      + ", ".join(f"{k} {v:.3f}" for k, v in rk["precision_at_recall"].items()))
    return 0
