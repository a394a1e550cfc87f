"""Training loop of Appendix B.2, resumable after interruption.

AdamW on the trainable tensors (edge-popup scores, or all weights for the
dense reference), learning rate ``lr`` (1e-4 in the paper) with linear warm-up
over the first ``warmup_epochs`` epoch(s) and cosine annealing to ``min_lr``
(1e-5) at the last step; ``epochs x steps_per_epoch`` steps (50 x 227 in the
paper); validation loss after every epoch, the best value kept.

Not stated in the paper and therefore options: batch size (227 steps per epoch
over WikiText-103 at context 1024 suggests about 512 sequences per step if an
epoch is one pass), weight decay (default 0), AdamW betas (PyTorch defaults).
At CPU scale lr 1e-4 moves Kaiming-uniform scores slowly (a few hundred steps
move a score by a few 1e-2 against a range of 1/sqrt(fan_in)); pass a larger
``lr`` to see the masks change more.

Checkpoints hold the trainable tensors, optimiser and scheduler states, RNG
states, the data position (the step; batches depend only on seed and step,
see :class:`~sltcheck.repro.lm.data.BatchStream`), the validation history and the
elapsed seconds. They are written to a temporary file and renamed, so a
``kill -9`` leaves either the old or the new checkpoint. The frozen weights
are regenerated from the seed and checked against a stored fingerprint.
Running the same run again resumes from the checkpoint and, on the same
device and thread count, gives bit-identical results to an uninterrupted run.
"""

from __future__ import annotations

import math
import os
import random
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch
from tqdm.auto import tqdm

from sltcheck.numerics.validation import check_choice, check_positive
from sltcheck.repro.lm.data import BatchStream, LMData, validation_subset
from sltcheck.repro.lm.edgepopup import check_keep_fraction
from sltcheck.repro.lm.model import (
    DEFAULT_MASKED,
    MODES,
    ModelConfig,
    build_wrapped,
    lm_loss,
    parse_masked,
)

CHECKPOINT_VERSION = 1


@dataclass(frozen=True)
class TrainConfig:
    """Optimisation settings (Appendix B.2 defaults where the paper gives them)."""

    epochs: int = 50
    steps_per_epoch: int = 227
    batch_size: int = 16
    grad_accum: int = 1
    lr: float = 1e-4
    min_lr: float = 1e-5
    warmup_epochs: float = 1.0
    weight_decay: float = 0.0
    val_blocks: int | None = None
    val_batch_size: int = 32
    checkpoint_every: int | None = None

    @property
    def total_steps(self) -> int:
        return self.epochs * self.steps_per_epoch


@dataclass(frozen=True)
class RunSpec:
    """Everything that determines one training run."""

    model: ModelConfig
    train: TrainConfig
    mode: str = "edge-popup"
    keep_fraction: float = 0.30
    masked: str = DEFAULT_MASKED
    scope: str = "per-tensor"
    seed: int = 0
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


def check_train_config(cfg: TrainConfig) -> TrainConfig:
    for name in ("epochs", "steps_per_epoch", "batch_size", "grad_accum", "val_batch_size"):
        value = getattr(cfg, name)
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    for name in ("val_blocks", "checkpoint_every"):
        value = getattr(cfg, name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value <= 0):
            raise ValueError(f"{name} must be a positive integer or None, got {value!r}")
    check_positive("lr", cfg.lr)
    check_positive("min_lr", cfg.min_lr, allow_zero=True)
    check_positive("warmup_epochs", cfg.warmup_epochs, allow_zero=True)
    check_positive("weight_decay", cfg.weight_decay, allow_zero=True)
    if cfg.min_lr > cfg.lr:
        raise ValueError(f"min_lr must be <= lr ({cfg.lr}), got {cfg.min_lr!r}")
    return cfg


def check_spec(spec: RunSpec) -> RunSpec:
    check_train_config(spec.train)
    check_choice("mode", spec.mode, MODES)
    check_keep_fraction(spec.keep_fraction)
    parse_masked(spec.masked)
    if isinstance(spec.seed, bool) or not isinstance(spec.seed, int) or spec.seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {spec.seed!r}")
    return spec


def lr_factor(step: int, cfg: TrainConfig) -> float:
    """lr(step) / lr: linear warm-up to 1, then cosine from 1 to min_lr / lr."""
    warmup = round(cfg.warmup_epochs * cfg.steps_per_epoch)
    if step < warmup:
        return (step + 1) / warmup
    span = max(1, cfg.total_steps - 1 - warmup)
    progress = min(1.0, (step - warmup) / span)
    floor = cfg.min_lr / cfg.lr
    return floor + (1.0 - floor) * 0.5 * (1.0 + math.cos(math.pi * progress))


def resolve_device(device: str = "auto") -> torch.device:
    check_choice("device", device, ("auto", "cpu", "cuda"))
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError("device must be 'cpu' or 'auto' here: CUDA is not available, got 'cuda'")
    return torch.device(device)


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % (2**32))  # noqa: NPY002 - global state other code may draw from
    torch.manual_seed(seed)


def _rng_state() -> dict:
    state = {
        "python": random.getstate(),
        "numpy": np.random.get_state(),  # noqa: NPY002
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def _set_rng_state(state: dict) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])  # noqa: NPY002
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def _fingerprint(model: torch.nn.Module) -> list[float]:
    """A cheap checksum of the (frozen) weights: sum and sum of squares per tensor."""
    with torch.no_grad():
        return [
            round(float(p.double().sum()), 6) for p in model.model.parameters()  # type: ignore[union-attr]
        ]


def save_checkpoint(path: Path, state: dict) -> None:
    """Write ``state`` to ``path`` atomically (temporary file + rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.tmp{os.getpid()}")
    with open(tmp, "wb") as handle:
        torch.save(state, handle)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


@torch.no_grad()
def evaluate(model: torch.nn.Module, blocks: torch.Tensor, batch_size: int,
             device: torch.device, amp: bool) -> float:
    """Mean next-token loss (nats) over ``blocks``."""
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    for start in range(0, len(blocks), batch_size):
        batch = blocks[start : start + batch_size].to(device)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=amp):
            loss = lm_loss(model(batch), batch)
        n = batch.numel() - batch.size(0)
        total += float(loss) * n
        count += n
    model.train(was_training)
    return total / count


def _resume(ckpt_path: Path, spec: RunSpec, fingerprint: list[float], params: list[torch.nn.Parameter],
            optimizer: torch.optim.Optimizer, scheduler: torch.optim.lr_scheduler.LRScheduler,
            dev: torch.device) -> tuple[int, list[dict], float, float]:
    """Load the checkpoint of this very run (same spec, same frozen weights) into the trainable
    parameters, optimizer, scheduler and RNGs; returns its step, history, best loss and seconds."""
    state = torch.load(ckpt_path, map_location="cpu", weights_only=False)
    if state["spec"] != spec.to_dict():
        raise ValueError(
            f"run_dir {str(ckpt_path.parent)!r} holds a checkpoint of a different run; "
            "use another run directory (or delete it) to start this one"
        )
    if state["fingerprint"] != fingerprint:
        raise ValueError("checkpoint frozen-weight fingerprint differs from the regenerated "
                         f"weights in {str(ckpt_path)!r}; the model code or seed changed")
    with torch.no_grad():
        for p, saved in zip(params, state["trainable"], strict=True):
            p.copy_(saved.to(dev))
    optimizer.load_state_dict(state["optimizer"])
    scheduler.load_state_dict(state["scheduler"])
    _set_rng_state(state["rng"])
    return state["data_position"], state["history"], state["best_val_loss"], state["seconds"]


def train_run(
    spec: RunSpec,
    data: LMData,
    run_dir: str | Path,
    *,
    device: str = "auto",
    amp: bool | None = None,
    stop_after_steps: int | None = None,
    progress: bool = True,
    keep_checkpoint: bool = False,
) -> dict | None:
    """Train one run; resume from ``run_dir/checkpoint.pt`` when present.

    Returns the result dict, or ``None`` when stopped early by
    ``stop_after_steps`` (a checkpoint is then left for resuming). ``amp``
    (bfloat16 autocast) defaults to on for CUDA, off for CPU.
    """
    check_spec(spec)
    cfg = spec.train
    dev = resolve_device(device)
    amp = dev.type == "cuda" if amp is None else amp
    run_dir = Path(run_dir)
    ckpt_path = run_dir / "checkpoint.pt"
    if spec.model.vocab_size != data.vocab_size:
        raise ValueError(
            f"model vocab_size must equal the tokenizer's ({data.vocab_size}), "
            f"got {spec.model.vocab_size}"
        )

    seed_everything(spec.seed)
    model = build_wrapped(
        spec.model, spec.mode, seed=spec.seed, keep_fraction=spec.keep_fraction,
        masked=spec.masked, scope=spec.scope,
    )
    fingerprint = _fingerprint(model)
    model.to(dev)
    model.train()
    params = model.trainable_parameters()
    optimizer = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: lr_factor(s, cfg))
    stream = BatchStream(data.train, cfg.batch_size * cfg.grad_accum, spec.seed)
    val_blocks = validation_subset(data.val, cfg.val_blocks)

    history: list[dict] = []
    step, best, seconds = 0, math.inf, 0.0
    if ckpt_path.is_file():
        step, history, best, seconds = _resume(ckpt_path, spec, fingerprint, params, optimizer, scheduler, dev)

    def checkpoint() -> None:
        save_checkpoint(ckpt_path, {
            "version": CHECKPOINT_VERSION,
            "spec": spec.to_dict(),
            "fingerprint": fingerprint,
            "trainable": [p.detach().cpu() for p in params],
            "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(),
            "rng": _rng_state(),
            "data_position": step,
            "history": history,
            "best_val_loss": best,
            "seconds": seconds,
        })

    bar = tqdm(total=cfg.total_steps, initial=step, disable=not progress, leave=False,
               desc=f"{spec.mode} s={spec.model.qk_scale:.3g} k={spec.keep_fraction:g}")
    started = time.perf_counter()
    while step < cfg.total_steps:
        batch = stream.batch(step).to(dev)
        optimizer.zero_grad(set_to_none=True)
        for micro in batch.chunk(cfg.grad_accum):
            with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=amp):
                loss = lm_loss(model(micro), micro) / cfg.grad_accum
            loss.backward()
        optimizer.step()
        scheduler.step()
        step += 1
        bar.update(1)
        bar.set_postfix(loss=f"{loss.item() * cfg.grad_accum:.3f}")
        if step % cfg.steps_per_epoch == 0:
            val = evaluate(model, val_blocks, cfg.val_batch_size, dev, amp)
            best = min(best, val)
            history.append({"epoch": step // cfg.steps_per_epoch, "step": step, "val_loss": val})
            bar.set_postfix(val=f"{val:.3f}", best=f"{best:.3f}")
        due = cfg.checkpoint_every is not None and step % cfg.checkpoint_every == 0
        stopping = stop_after_steps is not None and step >= stop_after_steps
        if (due or step % cfg.steps_per_epoch == 0 or stopping) and step < cfg.total_steps:
            seconds += time.perf_counter() - started
            started = time.perf_counter()
            checkpoint()
        if stopping and step < cfg.total_steps:
            bar.close()
            return None
    bar.close()
    seconds += time.perf_counter() - started
    counts = model.nonzero_counts()
    result = {
        "mode": spec.mode,
        "scale": spec.model.qk_scale,
        "keep_fraction": spec.keep_fraction if spec.mode == "edge-popup" else 1.0,
        "seed": spec.seed,
        "lr": cfg.lr,
        "min_lr": cfg.min_lr,
        "weight_decay": cfg.weight_decay,
        "best_val_loss": best,
        "final_val_loss": history[-1]["val_loss"],
        **counts,
        "steps": step,
        "seconds": round(seconds, 3),
        "device": str(dev),
        "history": history,
    }
    if keep_checkpoint:
        checkpoint()
    elif ckpt_path.exists():
        ckpt_path.unlink()
    return result
