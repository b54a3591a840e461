"""``gmprep doctor``: which answer backend a question would use and why, the model, and the store's health."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from gmprep.commands.ask import add_backend_arguments, settings_with_backend


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``doctor``."""
    p = sub.add_parser("doctor", help="which answer backend a question would use and why, the model, the store's health")
    p.add_argument("--json", action="store_true", help="one JSON object")
    add_backend_arguments(p)
    p.set_defaults(func=run_doctor)


def diagnose(args: argparse.Namespace) -> dict:
    """The doctor's findings as one JSON-ready dict."""
    from gmprep.core.llm.factory import resolve_backend
    from gmprep.core.llm.models import installed_model, model_path
    from gmprep.ingest.health import check_store

    settings = settings_with_backend(args)
    choice = resolve_backend(settings)
    model_file = Path(choice.model) if choice.model and choice.backend != "openai" else None
    size = model_file.stat().st_size if model_file is not None and model_file.is_file() else None
    installed = installed_model()
    store = check_store(settings.store_dir)
    return {
        "backend": choice.backend,
        "configured": settings.llm.backend,
        "reason": choice.reason,
        "model": choice.model,
        "model_bytes": size,
        "device": choice.device,
        "threads": choice.threads,
        "default_model": {"path": str(installed or model_path()), "installed": installed is not None},
        "store": {**store.model_dump(exclude={"meta"}), "usable": store.usable, "complete": store.complete},
        "ok": store.usable,
    }


def run_doctor(args: argparse.Namespace) -> int:
    """Print the findings; exit 1 when the store cannot answer questions."""
    info = diagnose(args)
    if args.json:
        print(json.dumps(info, indent=2))
        return 0 if info["ok"] else 1
    size = f" ({info['model_bytes'] / 2**20:.0f} MiB)" if info["model_bytes"] else ""
    print(f"backend: {info['backend']}" + (" (auto)" if info["configured"] == "auto" else ""))
    print(f"  why: {info['reason']}")
    if info["model"]:
        print(f"  model: {info['model']}{size}")
    print(f"  device: {info['device']}" + (f", {info['threads']} thread(s)" if info["threads"] else ""))
    store = info["store"]
    state = "healthy" if store["usable"] and not store["problems"] else "NOT usable"
    print(f"store: {store['store_dir']}: {state}, {store['entries']} entries, "
          f"{store['nodes_embedded']}/{store['nodes']} nodes embedded")
    for problem in store["problems"]:
        print(f"  problem: {problem}")
    return 0 if info["ok"] else 1
