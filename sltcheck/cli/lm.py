"""Commands ``sltcheck repro fig7``, ``sltcheck repro fig7-keep``, ``sltcheck repro fig8``
(Section 4.3, Figures 7 and 8) and ``sltcheck bench lm-step``."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sltcheck.repro.lm.train import TrainConfig


def _preset_names() -> tuple[str, ...]:
    from sltcheck.repro.lm.model import PRESETS

    return tuple(PRESETS)


MAX_SEEDS = 1000
MAX_STEPS = 10**9
MAX_BATCH = 2**16
MAX_RATE = 10.0  # learning rates and weight decays


def _tokenizer_files(path: Path) -> None:
    if not (path / "tokenizer.json").is_file() and not ((path / "vocab.json").is_file()
                                                         and (path / "merges.txt").is_file()):
        raise ValueError("is not a folder with vocab.json and merges.txt (GPT-2 BPE) or tokenizer.json")


def _wikitext(path: Path) -> None:
    from sltcheck.repro.lm.data import available_splits

    available_splits(path)


def _masked(text: str) -> str:
    from sltcheck.repro.lm.model import parse_masked

    parse_masked(text)
    return text


def _device(text: str) -> str:
    """auto, cpu or cuda, where this machine has it (checked before any data is read or run trained)."""
    from sltcheck.repro.lm.train import resolve_device

    resolve_device(text)
    return text


def _common(sub: argparse.ArgumentParser, figure: str, preset: bool = True) -> None:
    from sltcheck.cli.options import OUT_DIRECTORY, Checked, Choice, InputPath, Integer, Number
    from sltcheck.repro.lm.data import SPLITS
    from sltcheck.repro.lm.edgepopup import SCOPES

    _require_lm(sub)
    rate = Number(0, MAX_RATE, low_open=True)
    decay = Number(0, MAX_RATE)
    if preset:
        sub.add_argument("--preset", type=Choice(_preset_names()), default="cpu-tiny",
                         help=f"model size, one of {', '.join(_preset_names())} (default cpu-tiny)")
    sub.add_argument("--out", type=OUT_DIRECTORY, default=None, help=f"run directory (default runs/{figure}-PRESET)")
    sub.add_argument("--seeds", type=Integer(1, MAX_SEEDS), default=None,
                     help="number of seeds 0..N-1 (default 2 for cpu-tiny, 3 otherwise)")
    sub.add_argument("--data", type=InputPath("directory", _wikitext, "a folder of WikiText files"), default=None,
                     help="WikiText folder (default $SLTCHECK_WIKITEXT_DIR, else shared/data/wikitext-2 "
                     "in or above the working directory)")
    splits = Choice(("auto", *SPLITS))
    sub.add_argument("--train-split", type=splits, default="auto", help="train split (default auto)")
    sub.add_argument("--val-split", type=splits, default="auto", help="validation split (default auto)")
    sub.add_argument("--tokenizer", default=None,
                     type=InputPath("directory", _tokenizer_files, "a folder with a GPT-2 tokenizer"),
                     help="folder with GPT-2 vocab.json + merges.txt (default: train a BPE)")
    sub.add_argument("--vocab-size", type=Integer(257, 10**6), default=None,
                     help="size of the trained BPE (default: the preset's)")
    sub.add_argument("--cache-dir", type=OUT_DIRECTORY, default=None, help="tokenizer/token cache (default OUT/cache)")
    sub.add_argument("--epochs", type=Integer(1, 10**4), default=None)
    sub.add_argument("--steps-per-epoch", type=Integer(1, MAX_STEPS), default=None)
    sub.add_argument("--steps", type=Integer(1, MAX_STEPS), default=None,
                     help="total steps; sets steps-per-epoch = steps // epochs")
    sub.add_argument("--batch-size", type=Integer(1, MAX_BATCH), default=None)
    sub.add_argument("--grad-accum", type=Integer(1, MAX_BATCH), default=None)
    sub.add_argument("--lr", type=rate, default=None,
                     help="peak learning rate of the edge-popup scores (paper 1e-4; default: the preset's)")
    sub.add_argument("--min-lr", type=decay, default=None, help="final lr of the scores (paper 1e-5)")
    sub.add_argument("--weight-decay", type=decay, default=None, help="AdamW weight decay of the scores")
    sub.add_argument("--dense-lr", type=rate, default=None,
                     help="peak learning rate of the dense references (paper 1e-4; default: the preset's)")
    sub.add_argument("--dense-min-lr", type=decay, default=None, help="final lr of the dense references")
    sub.add_argument("--dense-weight-decay", type=decay, default=None,
                     help="AdamW weight decay of the dense references")
    sub.add_argument("--val-blocks", type=Integer(1, 10**7), default=None,
                     help="validation blocks per evaluation (default: the preset's)")
    sub.add_argument("--block-size", type=Integer(2, MAX_BATCH), default=None, help="context length")
    sub.add_argument("--masked", default="attention+mlp",
                     type=Checked(_masked, "'+'-joined groups of attention, mlp, embeddings, biases, layernorm, "
                                           "or all", "attention+mlp"),
                     help="masked tensor groups joined by '+': attention, mlp, embeddings, "
                     "biases, layernorm, or all (default attention+mlp)")
    sub.add_argument("--scope", type=Choice(SCOPES), default="per-tensor", help="per-tensor (default) or global")
    sub.add_argument("--device", type=Checked(_device, "auto, cpu or cuda (where available)", "cpu"), default="auto",
                     help="auto (default), cpu or cuda")
    sub.add_argument("--threads", type=Integer(1, 1024), default=None,
                     help="CPU threads for torch (default: torch's; 1 is faster on a busy machine)")
    sub.add_argument("--quiet", action="store_true", help="no progress bars")
    sub.add_argument("--collect-only", action="store_true",
                     help="train nothing: write results.json from the runs finished in --out "
                          "(marked partial where some are missing)")


def _validate_sweep(args: argparse.Namespace) -> None:
    """What needs several options, or the data, before anything is read, trained or written: steps
    against epochs, each mode's learning rates against the preset's, the splits against the data, and
    that the run directory does not hold another command's outputs."""
    from sltcheck.errors import UsageError
    from sltcheck.repro.lm.data import available_splits, find_data_dir, resolve_splits
    from sltcheck.repro.lm.sweeps import default_train
    from sltcheck.repro.lm.train import check_train_config
    from sltcheck.rundir import refuse_other_command

    for preset in _presets(args):
        epochs = args.epochs or default_train(preset).epochs
        if args.steps is not None and args.steps < epochs:
            raise UsageError(f"--steps must be at least the epochs ({epochs}), got {args.steps}")
        for mode, options in (("edge-popup", ("lr", "min_lr", "weight_decay")),
                              ("dense", ("dense_lr", "dense_min_lr", "dense_weight_decay"))):
            try:
                check_train_config(_mode_train(default_train(preset, mode), {},
                                               *(getattr(args, option) for option in options)))
            except ValueError as error:
                names = " / ".join("--" + option.replace("_", "-") for option in options)
                raise UsageError(f"{names} (preset {preset}): {error}") from None
        refuse_other_command(_out(args, preset), f"repro {args.figure}")
    try:
        resolve_splits(available_splits(find_data_dir(args.data)), args.train_split, args.val_split)
    except ValueError as error:
        raise UsageError(f"--train-split / --val-split: {error}") from None


def _presets(args: argparse.Namespace) -> list[str]:
    return list(args.sizes) if args.figure == "fig7" else [args.preset]


def _out(args: argparse.Namespace, preset: str) -> Path:
    if args.figure == "fig7":
        return Path(args.out or f"runs/fig7-{'+'.join(args.sizes)}")
    return Path(args.out or f"runs/{args.figure}-{preset}")


def _sweep(args: argparse.Namespace, figure: str) -> int:
    from sltcheck.repro.lm.sweeps import format_table

    _set_threads(args.threads)
    out = _out(args, args.preset)
    document = _run_preset(args, figure, args.preset, out)
    print(format_table(document))
    print(f"results: {out / 'results.json'}")
    return 0


def _fig7_sizes(args: argparse.Namespace) -> int:
    """The paper's Figure 7: one sweep per size at 30 % kept, combined into OUT/results.json."""
    from sltcheck.repro.lm.sweeps import combine_sizes, format_table, write_json
    from sltcheck.rundir import DirectoryLock, ensure_writable_directory

    _set_threads(args.threads)
    out = ensure_writable_directory(_out(args, ""))
    with DirectoryLock(out, "repro fig7"):
        documents = {size: _run_preset(args, "fig7", size, out / "sizes" / size) for size in args.sizes}
        document = combine_sizes(documents)
        write_json(out / "results.json", document)
    print(format_table(document))
    print(f"results: {out / 'results.json'} (one run directory per size under {out / 'sizes'})")
    return 0


def _run_preset(args: argparse.Namespace, figure: str, preset: str, out: Path) -> dict:
    from sltcheck.repro.lm.data import find_data_dir
    from sltcheck.repro.lm.sweeps import (
        PRESET_SEEDS,
        SweepConfig,
        default_model,
        default_train,
        fig7_points,
        fig7_size_points,
        fig8_points,
        load_data_for,
        run_sweep,
    )

    model_overrides = {} if args.block_size is None else {"block_size": args.block_size}
    model = default_model(preset, **model_overrides)
    vocab_size = args.vocab_size or model.vocab_size
    data = load_data_for(
        model, find_data_dir(args.data), tokenizer=args.tokenizer,
        vocab_size=vocab_size, cache_dir=args.cache_dir or out / "cache",
        train_split=args.train_split, val_split=args.val_split,
    )
    model = replace(model, vocab_size=data.vocab_size)
    shared = {
        key: getattr(args, key)
        for key in ("epochs", "steps_per_epoch", "batch_size", "grad_accum", "val_blocks")
        if getattr(args, key) is not None
    }
    if args.steps is not None:  # at least the epochs (checked by _validate_sweep)
        shared["steps_per_epoch"] = args.steps // shared.get("epochs", default_train(preset).epochs)
    train = _mode_train(default_train(preset), shared, args.lr, args.min_lr, args.weight_decay)
    dense_train = _mode_train(default_train(preset, "dense"), shared, args.dense_lr, args.dense_min_lr,
                              args.dense_weight_decay)
    n_seeds = PRESET_SEEDS[preset] if args.seeds is None else args.seeds
    if figure == "fig8":
        points = fig8_points(model.head_dim, args.scales, args.keep_fraction)
    elif figure == "fig7":
        points = fig7_size_points(model.head_dim, args.keep_fraction, dense=not args.no_dense)
    else:
        points = fig7_points(model.head_dim, args.keep_fractions, dense=not args.no_dense)
    sweep = SweepConfig(figure, preset, model, train, tuple(points), tuple(range(n_seeds)),
                        masked=args.masked, scope=args.scope, dense_train=dense_train)
    dense = (f", dense lr {dense_train.lr:g} -> {dense_train.min_lr:g}"
             if any(point.mode == "dense" for point in points) else "")
    print(f"{figure} {preset}: {len(points)} points x {n_seeds} seeds, "
          f"{train.epochs} x {train.steps_per_epoch} steps, batch {train.batch_size}, "
          f"score lr {train.lr:g} -> {train.min_lr:g}{dense}; train on {data.info['train_split']} "
          f"({data.info['train_tokens']} tokens), validate on {data.info['val_split']} -> {out}")
    return run_sweep(sweep, data, out, device=args.device, progress=not args.quiet,
                     collect_only=args.collect_only)


def _mode_train(train: TrainConfig, shared: dict, lr: float | None, min_lr: float | None,
                weight_decay: float | None) -> TrainConfig:
    """One mode's training: the preset's, with the options both modes share and this mode's own
    (an lr given without a min-lr anneals to lr / 10 when the preset's min-lr would exceed it)."""
    from dataclasses import replace

    own: dict[str, Any] = {key: value for key, value in
                              (("lr", lr), ("min_lr", min_lr), ("weight_decay", weight_decay)) if value is not None}
    train = replace(train, **shared, **own)
    if lr is not None and min_lr is None and train.min_lr > lr:
        train = replace(train, min_lr=lr / 10)
    return train


def _set_threads(threads: int | None) -> None:
    if threads is None:
        return
    import torch

    torch.set_num_threads(threads)


def _fig7(args: argparse.Namespace) -> int:
    return _fig7_sizes(args)


def _fig7_keep(args: argparse.Namespace) -> int:
    return _sweep(args, "fig7-keep")


def _fig8(args: argparse.Namespace) -> int:
    return _sweep(args, "fig8")


def _bench(args: argparse.Namespace) -> int:
    from sltcheck.repro.lm.bench import bench_lm_step, format_bench, write_json
    from sltcheck.rundir import ensure_writable_file
    from sltcheck.schema import SCHEMA_VERSION

    if args.out:
        ensure_writable_file(args.out)
    _set_threads(args.threads)
    result = bench_lm_step(args.preset, batch_size=args.batch_size, warmup=args.warmup,
                           repeats=args.repeats, device=args.device)
    print(format_bench(result))
    if args.out:
        write_json(args.out, {"schema_version": SCHEMA_VERSION, **result})
        print(f"written {args.out}")
    return 0


def register(cli) -> None:
    cli.command(
        "fig7", "Figure 7: edge-popup loss vs nonzero parameters across model sizes at 30% kept, "
        "with/without Q/K scaling, beside dense models",
        _fig7, group="repro", arguments=_fig7_arguments, validate=_validate_sweep,
    )
    cli.command(
        "fig7-keep", "beyond the paper: Figure 7 inside one model, the kept fraction varied",
        _fig7_keep, group="repro", arguments=_fig7_keep_arguments, validate=_validate_sweep,
    )
    cli.command("fig8", "Figure 8: edge-popup loss vs query/key scale s", _fig8,
                group="repro", arguments=_fig8_arguments, validate=_validate_sweep)
    cli.command("lm-step", "time per training step: edge-popup vs dense GPT-2", _bench,
                group="bench", arguments=_bench_arguments)


def _kept() -> Any:
    from sltcheck.cli.options import Number

    return Number(0, 1, low_open=True)


def _fig7_arguments(fig7: argparse.ArgumentParser) -> None:
    from sltcheck.cli.options import Names

    _common(fig7, "fig7", preset=False)
    from sltcheck.repro.lm.sweeps import FIG7_CPU_SIZES, FIG7_SIZES

    fig7.set_defaults(figure="fig7")
    fig7.add_argument("--sizes", type=Names(_preset_names()), default=",".join(FIG7_CPU_SIZES),
                      help=f"comma-separated model presets (default {','.join(FIG7_CPU_SIZES)}, a CPU stand-in; "
                           f"the paper's: {','.join(FIG7_SIZES)})")
    fig7.add_argument("--keep-fraction", type=_kept(), default=0.30,
                      help="fraction of weights kept (default 0.30, the paper's)")
    fig7.add_argument("--no-dense", action="store_true", help="skip the dense-trained references")


def _fig7_keep_arguments(fig7: argparse.ArgumentParser) -> None:
    from sltcheck.cli.options import Numbers

    _common(fig7, "fig7-keep")
    fig7.set_defaults(figure="fig7-keep")
    fig7.add_argument("--keep-fractions", type=Numbers(_kept()), default="0.1,0.2,0.3,0.5,0.7",
                      help="comma-separated fractions of weights kept")
    fig7.add_argument("--no-dense", action="store_true", help="skip the dense-trained reference")


def _fig8_arguments(fig8: argparse.ArgumentParser) -> None:
    from sltcheck.cli.options import Number, Numbers

    _common(fig8, "fig8")
    fig8.set_defaults(figure="fig8")
    fig8.add_argument("--scales", type=Numbers(Number(0, 1e6, low_open=True), words=("theory",)),
                      default="1,1.5,2,2.5,theory,3.5,4,5", help="comma-separated s values; 'theory' = n_K^(1/4)")
    fig8.add_argument("--keep-fraction", type=_kept(), default=0.30,
                      help="fraction of weights kept (default 0.30)")


def _require_lm(parser: argparse.ArgumentParser) -> None:
    """Stop with the extra to install when torch (or the lm package) is absent."""
    from sltcheck.extras import MissingExtra

    try:
        import sltcheck.repro.lm  # noqa: F401 - checks torch
    except MissingExtra as error:
        parser.error(str(error))


def _bench_arguments(bench: argparse.ArgumentParser) -> None:
    from sltcheck.cli.options import JSON_OUT, Checked, Choice, Integer

    _require_lm(bench)
    bench.add_argument("--preset", type=Choice(_preset_names()), default="cpu-tiny")
    bench.add_argument("--out", type=JSON_OUT, default=None, help="JSON output file")
    bench.add_argument("--batch-size", type=Integer(1, MAX_BATCH), default=None)
    bench.add_argument("--warmup", type=Integer(0, 10**4), default=3)
    bench.add_argument("--repeats", type=Integer(1, 10**5), default=10)
    bench.add_argument("--device", type=Checked(_device, "auto, cpu or cuda (where available)", "cpu"),
                       default="auto")
    bench.add_argument("--threads", type=Integer(1, 1024), default=None, help="CPU threads for torch")
