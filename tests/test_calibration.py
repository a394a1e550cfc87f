"""Calibration of Lemma 7's C: seeded, reproducible, consistent with the construction."""

from __future__ import annotations

import numpy as np
import pytest

from sltcheck.pruning import calibration
from sltcheck.pruning.construction import approximate_product

TINY = dict(configs=((1, 1, 0.2), (2, 1, 0.3)), trials=40, n_max=24, decay_trials=30, decay_range=(2, 10))


def test_seeded_and_reproducible():
    a = calibration.calibrate(seed=3, **TINY)
    b = calibration.calibrate(seed=3, **TINY)
    c = calibration.calibrate(seed=4, **TINY)
    strip = lambda r: [{k: v for k, v in x.items() if k != "seconds"} for x in r["configs"]]  # noqa: E731
    assert strip(a) == strip(b)
    assert a["decay"] == b["decay"]
    assert a["C"] == b["C"]
    assert strip(a) != strip(c)


def test_definitions():
    r = calibration.calibrate(seed=1, **TINY)
    # Lemma 7 needs n' >= C log(d1 d2 / eps), so C = n' / log(d1 d2 / eps); the logarithms of
    # TINY's configs, ln 5 and ln(20/3), are published constants (to 16 digits), not recomputed.
    log_terms = {(1, 1, 0.2): 1.6094379124341003, (2, 1, 0.3): 1.8971199848858813}
    for row in r["configs"]:
        L = log_terms[(row["d1"], row["d2"], row["eps"])]
        assert row["log_term"] == pytest.approx(L, rel=1e-15)
        assert row["C"] == pytest.approx(row["n_prime"] / L, rel=1e-15)
        assert row["C_lower"] <= row["C_point"] <= row["C"]
        scan = {s["n_prime"]: s for s in row["scan"]}
        assert scan[row["n_prime"]]["ci_high"] <= row["eps"]
        if row["n_prime"] > 1:
            assert scan[row["n_prime"] - 1]["ci_high"] > row["eps"]
        failures = [s["failures"] for s in row["scan"]]
        assert failures == sorted(failures, reverse=True)  # monotone in n' (nested candidate sets)
    assert r["C"] == max(x["C"] for x in r["configs"])


def test_clopper_pearson():
    low, high = calibration.clopper_pearson(0, 100)
    assert low == 0
    assert high == pytest.approx(1 - 0.025 ** (1 / 100), rel=1e-9)
    low, high = calibration.clopper_pearson(5, 10)
    assert low < 0.5 < high
    assert low == pytest.approx(1 - high, rel=1e-9)
    with pytest.raises(ValueError, match="need 0 <= k <= n and n >= 1, got k=3, n=2"):
        calibration.clopper_pearson(3, 2)


def test_critical_width_agrees_with_lemma7_construction():
    """At its critical n' the trial succeeds through construction.approximate_product (mitm),
    and one unit fewer it fails: the calibration measures Lemma 7's construction itself."""
    d1, d2, eps, n_max = 2, 2, 0.3, 20
    rng = np.random.default_rng(7)
    critical, _ = calibration.critical_widths(d1, d2, eps, 3, rng, n_max)
    rng = np.random.default_rng(7)  # redraw the same pools
    W = rng.uniform(-1, 1, (3, d2, d1))
    u = rng.uniform(-1, 1, (3, d1, n_max))
    v = rng.uniform(-1, 1, (3, d2, d1, n_max))
    for t in range(3):
        for width, ok in ((int(critical[t]), True), (int(critical[t]) - 1, False)):
            if width < 1:
                continue
            W1 = rng.uniform(-1, 1, (d1 * width, d1))  # off-block entries: pruned, any values
            W2 = np.zeros((d2, d1 * width))
            for j in range(d1):
                W1[j * width:(j + 1) * width, j] = u[t, j, :width]
                W2[:, j * width:(j + 1) * width] = v[t, :, j, :width]
            result = approximate_product(W[t], W1, W2, solver="mitm")
            assert (result.error <= eps / (d1 * d2)) is ok


def test_decay_fit_is_near_lueker_for_the_median():
    rng = np.random.default_rng(0)
    d = calibration.decay(200, rng, (4, 16))
    assert -1.0 < d["fit_log_median"]["slope"] < -0.45
    assert d["fit_log_mean"]["slope"] < 0


def test_load_C(tmp_path):
    assert calibration.load_C() == calibration.STORED_C
    with pytest.raises(ValueError, match="calibrated"):
        calibration.load_C(str(tmp_path / "missing.json"))
    (tmp_path / "bad.json").write_text('{"C": null}')
    with pytest.raises(ValueError, match="positive"):
        calibration.load_C(str(tmp_path / "bad.json"))


@pytest.mark.parametrize(("kwargs", "word"), [(dict(trials=0), "trials"), (dict(seed=-1), "seed"),
                                         (dict(n_max=60), "n_max"), (dict(configs=((1, 1, 1.5),)), "eps")])
def test_bad_inputs(kwargs, word):
    with pytest.raises(ValueError, match=word):
        calibration.calibrate(**{**dict(trials=2, decay_trials=0), **kwargs})
