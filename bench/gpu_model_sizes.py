"""Which Qwen2.5 sizes fit one GPU, and how fast the transformers backend's ``generate`` runs them (issue 13).

The lent GPU machine reaches nothing and a call carries 64 MiB with the 62 MiB tree, so no weights can
travel. Speed and memory depend on a model's shapes, not on its weights: this builds each Qwen2.5 size
(the published configs, written out below) with random bf16 weights directly on the GPU and times the
same ``generate`` call ``TransformersBackend`` makes (greedy, cuDNN attention left out). Answer quality is
not measured here. Per size: parameters, weight memory, first token after a prompt of the length our
answer prompts have, decode tokens/s for one sequence and for a batch (concurrent plan nodes), and for the
smallest size also transformers' static cache (CUDA graphs through torch.compile).

    python3 bench/gpu_model_sizes.py --out $OUT/sizes.json            # on the GPU machine
    python3 bench/gpu_model_sizes.py --sizes tiny --device cpu          # a dry run of the script anywhere
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from pathlib import Path

import torch

# Qwen2.5 configs as published with the models (hidden, intermediate, layers, heads, kv heads, vocab, tied)
SHAPES: dict[str, dict] = {
    "tiny": dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2, vocab_size=1000, tie_word_embeddings=True),
    "1.5B": dict(hidden_size=1536, intermediate_size=8960, num_hidden_layers=28, num_attention_heads=12,
                 num_key_value_heads=2, vocab_size=151936, tie_word_embeddings=True),
    "7B": dict(hidden_size=3584, intermediate_size=18944, num_hidden_layers=28, num_attention_heads=28,
               num_key_value_heads=4, vocab_size=152064, tie_word_embeddings=False),
    "14B": dict(hidden_size=5120, intermediate_size=13824, num_hidden_layers=48, num_attention_heads=40,
                num_key_value_heads=8, vocab_size=152064, tie_word_embeddings=False),
    "32B": dict(hidden_size=5120, intermediate_size=27648, num_hidden_layers=64, num_attention_heads=40,
                num_key_value_heads=8, vocab_size=152064, tie_word_embeddings=False),
    "72B": dict(hidden_size=8192, intermediate_size=29568, num_hidden_layers=80, num_attention_heads=64,
                num_key_value_heads=8, vocab_size=152064, tie_word_embeddings=False),
}


def _no_cudnn():
    # the backend's own context (core/llm/transformers_backend._no_cudnn_attention), inlined: the GPU image
    # lacks pydantic, which importing the backend module needs
    from torch.nn.attention import SDPBackend, sdpa_kernel

    return sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH])


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _timed_generate(model, ids, new: int, device: str, **extra) -> float:
    mask = torch.ones_like(ids)
    _sync(device)
    t = time.perf_counter()
    with torch.inference_mode(), _no_cudnn():
        out = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=new, min_new_tokens=new,
                             do_sample=False, pad_token_id=0, **extra)
    _sync(device)
    assert out.shape[1] == ids.shape[1] + new, out.shape
    return time.perf_counter() - t


def measure(name: str, device: str, prompt: int, new: int, batch: int, static: bool) -> dict:
    from transformers import AutoModelForCausalLM, Qwen2Config

    row: dict = {"size": name, "prompt_tokens": prompt, "new_tokens": new}
    cfg = Qwen2Config(**SHAPES[name], max_position_embeddings=32768, rope_theta=1e6, rms_norm_eps=1e-6)
    if device.startswith("cuda"):
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    t = time.perf_counter()
    dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(cfg, dtype=dtype)
    model.eval()
    _sync(device)
    row["build_s"] = round(time.perf_counter() - t, 1)
    row["params_b"] = round(sum(p.numel() for p in model.parameters()) / 1e9, 3)
    row["on"] = str(next(model.parameters()).device)
    if device.startswith("cuda"):
        row["weights_gib"] = round(torch.cuda.memory_allocated() / 2**30, 1)
    gen = torch.Generator(device="cpu").manual_seed(0)
    ids = torch.randint(100, cfg.vocab_size - 100, (1, prompt), generator=gen).to(device)
    _timed_generate(model, ids[:, :32], 4, device)  # warm-up: kernels, allocator
    first = _timed_generate(model, ids, 1, device)
    whole = _timed_generate(model, ids, new, device)
    row["first_token_ms"] = round(first * 1000)
    row["decode_tok_s"] = round((new - 1) / max(whole - first, 1e-9), 1)
    if batch > 1:
        ids_b = torch.randint(100, cfg.vocab_size - 100, (batch, prompt), generator=gen).to(device)
        tb = _timed_generate(model, ids_b, new, device)
        row[f"batch{batch}_total_tok_s"] = round(batch * new / tb, 1)
        row[f"batch{batch}_s"] = round(tb, 2)
    if device.startswith("cuda"):
        row["peak_gib"] = round(torch.cuda.max_memory_allocated() / 2**30, 1)
    if static:
        # one static cache of a fixed length for every question (so the compiled decode step is built once and
        # reused: transformers compiles it when the cache is static), reset between generations
        from transformers import StaticCache

        cache = StaticCache(config=cfg, max_cache_len=4096)

        def run_static(x, n, m=model):
            with torch.inference_mode():  # the cache's tensors were made in inference mode
                cache.reset()
            return _timed_generate(m, x, n, device, past_key_values=cache)

        t = time.perf_counter()
        run_static(ids, new)  # compiles
        run_static(ids[:, :1000], new)
        row["static_warmup_s"] = round(time.perf_counter() - t, 1)
        times = []
        for length in (prompt, prompt - 300, prompt + 200):  # other prompt lengths: no recompile wanted
            x = torch.randint(100, cfg.vocab_size - 100, (1, length), generator=gen).to(device)
            times.append((run_static(x, 1), run_static(x, new)))
        row["static_first_token_ms"] = [round(a * 1000) for a, _ in times]
        row["static_decode_tok_s"] = [round((new - 1) / max(b - a, 1e-9), 1) for a, b in times]
    del model
    gc.collect()
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1.5B,7B,14B,32B,72B")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--prompt", type=int, default=1800, help="prompt tokens (our answer prompts: ~1,500-2,000)")
    ap.add_argument("--new", type=int, default=128, help="generated tokens")
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--static", default="1.5B", help="sizes also timed with the static cache")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    info: dict = {"torch": torch.__version__}
    try:
        import transformers

        info["transformers"] = transformers.__version__
    except ImportError:
        pass
    if args.device.startswith("cuda"):
        free, total = torch.cuda.mem_get_info()
        info.update(gpu=torch.cuda.get_device_name(0), total_gib=round(total / 2**30, 1),
                    free_gib=round(free / 2**30, 1))
    print(json.dumps(info), flush=True)
    rows = []
    # every size eagerly first, then the static-cache runs (compiling may take minutes)
    runs = [(n, False) for n in args.sizes.split(",")] + [(n, True) for n in args.static.split(",") if n]
    for name, static in runs:
        try:
            row = measure(name, args.device, args.prompt, args.new, args.batch, static)
        except torch.OutOfMemoryError as exc:
            row = {"size": name, "fits": False, "error": str(exc).splitlines()[0][:300]}
        except Exception as exc:  # a size that breaks must not cost the others their figures
            row = {"size": name, "error": f"{type(exc).__name__}: {str(exc)[:300]}"}
        gc.collect()
        if args.device.startswith("cuda"):
            torch.cuda.empty_cache()
        rows.append(row)
        print(json.dumps(row), flush=True)
        if args.out:
            args.out.write_text(json.dumps({"machine": info, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
