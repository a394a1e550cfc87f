"""``sltcheck bench lm-step``: time per training step of edge-popup vs dense
training of the same GPT-2 (same weights, same batches), side by side.

A step is forward + backward + AdamW update on one batch of random token ids
(step time does not depend on the text). Edge-popup steps include computing
the top-k masks from the scores. The device is CUDA when available.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

import torch

from sltcheck.repro.lm.model import build_wrapped, get_preset, lm_loss
from sltcheck.repro.lm.train import resolve_device


def time_steps(model, batch: torch.Tensor, *, warmup: int, repeats: int, amp: bool) -> list[float]:
    """Seconds per training step, ``repeats`` timed steps after ``warmup`` untimed ones."""
    device = batch.device
    optimizer = torch.optim.AdamW(model.trainable_parameters(), lr=1e-4)
    times = []
    for i in range(warmup + repeats):
        if device.type == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=amp):
            loss = lm_loss(model(batch), batch)
        loss.backward()
        optimizer.step()
        if device.type == "cuda":
            torch.cuda.synchronize()
        if i >= warmup:
            times.append(time.perf_counter() - start)
    return times


def bench_lm_step(
    preset: str = "cpu-tiny",
    *,
    batch_size: int | None = None,
    warmup: int = 3,
    repeats: int = 10,
    keep_fraction: float = 0.30,
    device: str = "auto",
    seed: int = 0,
) -> dict:
    config = get_preset(preset)
    dev = resolve_device(device)
    amp = dev.type == "cuda"
    batch_size = batch_size or (16 if preset == "cpu-tiny" else 8)
    generator = torch.Generator().manual_seed(seed)
    batch = torch.randint(0, config.vocab_size, (batch_size, config.block_size),
                          generator=generator).to(dev)
    rows: list[dict[str, Any]] = []
    for mode in ("edge-popup", "dense"):
        torch.manual_seed(seed)
        model = build_wrapped(config, mode, seed=seed, keep_fraction=keep_fraction).to(dev)
        model.train()
        times = time_steps(model, batch, warmup=warmup, repeats=repeats, amp=amp)
        tokens = batch.numel()
        rows.append({
            "mode": mode,
            "trainable_params": sum(p.numel() for p in model.trainable_parameters()),
            "median_ms": 1e3 * statistics.median(times),
            "mean_ms": 1e3 * statistics.fmean(times),
            "min_ms": 1e3 * min(times),
            "max_ms": 1e3 * max(times),
            "tokens_per_s": tokens / statistics.median(times),
        })
        del model
    return {
        "benchmark": "lm-step",
        "preset": preset,
        "model": config.to_dict(),
        "batch_size": batch_size,
        "keep_fraction": keep_fraction,
        "device": str(dev),
        "device_name": torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu",
        "threads": torch.get_num_threads(),
        "amp_bf16": amp,
        "warmup": warmup,
        "repeats": repeats,
        "rows": rows,
        "edge_popup_over_dense": rows[0]["median_ms"] / rows[1]["median_ms"],
        "torch": torch.__version__,
    }


def format_bench(result: dict) -> str:
    lines = [
        f"lm-step {result['preset']} batch {result['batch_size']} x {result['model']['block_size']}"
        f" on {result['device_name']} ({result['threads']} threads)",
        f"{'mode':<11} {'trainable':>11} {'median ms':>10} {'min ms':>8} {'max ms':>8} {'tok/s':>10}",
    ]
    for row in result["rows"]:
        lines.append(
            f"{row['mode']:<11} {row['trainable_params']:>11,d} {row['median_ms']:>10.1f} "
            f"{row['min_ms']:>8.1f} {row['max_ms']:>8.1f} {row['tokens_per_s']:>10.0f}"
        )
    lines.append(f"edge-popup / dense step time: {result['edge_popup_over_dense']:.2f}")
    return "\n".join(lines)


def write_json(path: str | Path, document: dict) -> None:
    """Strict JSON, written atomically (non-finite timings as "inf"/"nan")."""
    from sltcheck.jsonfiles import write_json_atomic
    from sltcheck.schema import json_safe

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, json_safe(document), indent=2)
