"""Benchmark of the input-space enclosures (``--input-space``): interval, mean-value and affine forms side by side.

    python benchmarks/input_space_forms.py [--blocks 1,2,3] [--mha] [--spaces task,ball] [--boxes 200]
                                           [--budget 50000] [--seed 0]

For Figure 6's quick sources (mode theory, width 8, source 0, T = 4; pruned as ``sltcheck repro fig6``
prunes them; ``--blocks ''`` for none) and, with ``--mha``, Figure 4's quick width-8 source 0, each form
encloses the same random boxes of each space at four sizes (a fraction of the space's width in every
dimension) and is set against the float64 error at a random point of each box: the median of upper / error
(1 is exact; every upper must be at least the error, or the script stops) and the time per box. Then, for
each form, the branch-and-bound's bracket (upper / lower) after a fixed number of boxes. Numbers in
docs/explanation/input-space.md come from this script.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from sltcheck.model.weights import MHAWeights
from sltcheck.pruning import construction, sources
from sltcheck.repro import input_space, source_check, sweep_config, synthetic, targets
from sltcheck.repro.dataset import angular_velocity

FRACTIONS = (0.3, 0.1, 0.03, 0.01)


def pairs(block_counts: list[int]) -> dict[int, tuple[input_space.SourcePair, np.ndarray]]:
    """Figure 6's quick width-8 source 0 for each block count, and the test set's worst (omega, theta_0)."""
    config = sweep_config.preset_config("fig6", "quick", "theory", widths=(8,), sources=1)  # every B: one rng
    built = synthetic.build_targets(config, progress=False)
    test = angular_velocity("test", config.seed, config.test_samples)
    found = {}
    for blocks in block_counts:
        target = targets.apply_norm_policy(built.weights[blocks], config.norm_policy)
        rng = source_check._source_seed(config, blocks, 8, 0)
        source = sources.source_transformer(config.init, rng, blocks=blocks, heads=config.heads,
                                            d=target.blocks[0].attention.d_in, n_mha=8, n_fc=8)
        pruned = construction.prune_transformer(target, source, solver=config.solver,
                                                options=config.mip_options()).weights
        X, mask = test.tokens(4), source_check.full_attention(4)
        errors = source_check._transformer_errors(target, pruned, X, mask)
        worst = source_check._worst_rows(errors.worst, source_check.STARTS)
        found[blocks] = (input_space.SourcePair.of(target, pruned),
                         np.stack([test.omega[worst], test.theta0[worst]], axis=1))
    return found


def mha_pair() -> tuple[input_space.SourcePair, np.ndarray, np.ndarray | None, float]:
    """Figure 4's quick width-8 source 0 (a trained target with its regression token), its test set's worst
    (omega, theta_0), the token and alpha."""
    config = sweep_config.preset_config("fig4", "quick", "theory", widths=(8,), sources=1)
    built = synthetic.build_targets(config, progress=False)
    test = angular_velocity("test", config.seed, config.test_samples)
    target = targets.apply_norm_policy(built.weights[config.blocks[0]], config.norm_policy)
    source = sources.source_mha(config.init, source_check._source_seed(config, 8, 0), heads=target.heads,
                                d_in=target.d_in, d_out=target.d_out, n_key=8, n_value=8)
    pruned = construction.prune_mha(target, source, solver=config.solver, options=config.mip_options()).weights
    X, mask = test.tokens(4, token=built.token), source_check.full_attention(4)
    errors = source_check._attention_errors(target, pruned, X, mask)
    worst = source_check._worst_rows(errors.worst, source_check.STARTS)
    return (input_space.SourcePair.of(target, pruned), np.stack([test.omega[worst], test.theta0[worst]], axis=1),
            built.token, source_check.alpha_for(built.token))


def space_of(name: str, token: np.ndarray | None = None, alpha: float = 1.0) -> input_space.Space:
    return input_space.task_space(4, token) if name == "task" else input_space.ball_space(4, token, alpha)


def excess(pair: input_space.SourcePair, space: input_space.Space, count: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    dims = len(space.names)
    for fraction in FRACTIONS:
        centres = rng.uniform(space.lows, space.highs, (count, dims))
        half = fraction * (space.highs - space.lows) / 2
        lows, highs = np.maximum(centres - half, space.lows), np.minimum(centres + half, space.highs)
        points = lows + rng.uniform(0, 1, (count, dims)) * (highs - lows)
        if space.name == "ball":  # the point itself, not moved onto the disk as the search's points are
            first = np.broadcast_to(space.token, (count, 1, 2))
            errors = pair.errors(np.concatenate([first, points.reshape(count, -1, 2)], axis=1))
        else:
            errors = pair.errors(space.tokens(points))
        cells = []
        for form in input_space.FORMS:
            started = time.perf_counter()
            uppers = pair.box_errors(space, lows, highs, form)
            seconds = time.perf_counter() - started
            if not np.all(uppers >= errors):
                raise AssertionError(f"{form}: an upper end below a point's error (an enclosure is wrong)")
            cells.append(f"{form} {np.median(uppers / errors):7.3f} ({1e3 * seconds / count:.2f} ms)")
        print(f"    width x{fraction:<5}  " + "   ".join(cells), flush=True)


def brackets(pair: input_space.SourcePair, space: input_space.Space, starts: np.ndarray, budget: int,
             seed: int) -> None:
    if space.name == "ball":
        task = input_space.task_space(4, space.token)
        task_point, _ = input_space.search(task, pair, starts, np.random.default_rng(seed))
        starts = np.vstack([input_space._ball_points(starts, 4), input_space._ball_points(task_point[None], 4)])
    point, value = input_space.search(space, pair, starts, np.random.default_rng(seed))
    key = (space.name, "mha" if isinstance(pair.target, MHAWeights) else "transformer")
    for form in input_space.FORMS:
        saved = input_space.FORM[key]
        input_space.FORM[key] = form
        try:
            started = time.perf_counter()
            upper, _, best, boxes = input_space.branch_and_bound(space, pair, point, value, budget)
        finally:
            input_space.FORM[key] = saved
        print(f"    {form:<10} after {boxes:>7} boxes: upper {upper:.4g}, float lower {best:.4g}, "
              f"upper / lower {upper / best:.3f}, {time.perf_counter() - started:.0f} s", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", default="1,2,3")
    parser.add_argument("--spaces", default="task,ball")
    parser.add_argument("--boxes", type=int, default=200, help="random boxes per size")
    parser.add_argument("--budget", type=int, default=50_000, help="boxes per bracket (0: no brackets)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--mha", action="store_true", help="also Figure 4's quick width-8 source 0 (an MHA)")
    args = parser.parse_args()
    cases: list[tuple[str, input_space.SourcePair, np.ndarray, np.ndarray | None, float]] = []
    if args.mha:
        pair, starts, token, alpha = mha_pair()
        cases.append(("fig4 MHA", pair, starts, token, alpha))
    if args.blocks:
        for blocks, (pair, starts) in pairs([int(b) for b in args.blocks.split(",")]).items():
            cases.append((f"fig6 B = {blocks}", pair, starts, None, 1.0))
    for label, pair, starts, token, alpha in cases:
        for name in args.spaces.split(","):
            space = space_of(name, token, alpha)
            print(f"{label}, {name} ({len(space.names)} parameters): median upper / error, time per box",
                  flush=True)
            excess(pair, space, args.boxes, args.seed)
            if args.budget:
                brackets(pair, space, starts, args.budget, args.seed)


if __name__ == "__main__":
    main()
