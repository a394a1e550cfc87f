"""The learning-rate sweep behind the CPU presets' per-mode learning rates (Figure 7).

One training run per (mode, peak lr) at a CPU preset, seed 0, everything else the preset's
(the lr anneals to lr / 10): edge-popup at s = n_K^(1/4), keeping 30 %, and the dense
reference at s = 1. Each finished run is written to ``OUT/<preset>-<mode>-lr<lr>.json`` at
once and skipped when the command is rerun; the table of best validation losses is printed.

    python benchmarks/lm_lr_sweep.py --preset cpu-xs --out runs/lr-sweep \\
        --plan dense:1e-4,dense:1e-3,dense:3e-3,dense:1e-2,dense:3e-2,edge-popup:3e-3,edge-popup:1e-2,\\
edge-popup:3e-2,edge-popup:1e-1

Data: ``--data`` as for ``sltcheck repro fig7``. The runs validate on the split Figure 7
validates on, so the chosen rates are tuned on it (one seed, five values per mode): a small
selection effect that favours both modes alike.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="cpu-xs")
    parser.add_argument("--out", required=True)
    parser.add_argument("--plan", required=True, help="comma-separated mode:lr pairs")
    parser.add_argument("--data", default=None)
    args = parser.parse_args()

    import torch

    from sltcheck.repro.lm.data import find_data_dir
    from sltcheck.repro.lm.model import theory_scale
    from sltcheck.repro.lm.sweeps import default_model, default_train, load_data_for
    from sltcheck.repro.lm.train import RunSpec, train_run

    torch.set_num_threads(1)
    out = Path(args.out)
    plan = []
    for item in args.plan.split(","):
        mode, _, lr = item.strip().partition(":")
        if mode not in ("dense", "edge-popup") or not lr:
            raise SystemExit(f"plan must be mode:lr pairs with mode dense or edge-popup, got {item!r}")
        plan.append((mode, float(lr)))
    model = default_model(args.preset)
    data = load_data_for(model, find_data_dir(args.data), tokenizer=None, vocab_size=model.vocab_size,
                         cache_dir=out / "cache")
    model = replace(model, vocab_size=data.vocab_size)
    rows = []
    for mode, lr in plan:
        path = out / f"{args.preset}-{mode}-lr{lr:g}.json"
        if not path.exists():
            train = replace(default_train(args.preset), lr=lr, min_lr=lr / 10)
            scale = theory_scale(model.head_dim) if mode == "edge-popup" else 1.0
            spec = RunSpec(model=replace(model, qk_scale=scale), train=train, mode=mode, seed=0)
            result = train_run(spec, data, out / f"run-{args.preset}-{mode}-{lr:g}", device="cpu", progress=False)
            assert result is not None
            path.write_text(json.dumps({"preset": args.preset, "mode": mode, "lr": lr, "scale": scale,
                                        "best": result["best_val_loss"], "history": result["history"],
                                        "seconds": result["seconds"]}))
        rows.append(json.loads(path.read_text()))
    print(f"{'preset':<10} {'mode':<11} {'lr':>7} {'best val loss':>14}  per epoch")
    for row in rows:
        epochs = ", ".join(f"{h['val_loss']:.3f}" for h in row["history"])
        print(f"{row['preset']:<10} {row['mode']:<11} {row['lr']:>7g} {row['best']:>14.4f}  {epochs}")


if __name__ == "__main__":
    main()
