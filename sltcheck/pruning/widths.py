"""Width calculator: the source hidden dimensions the paper's theorems ask for.

All widths have the form n >= d1 C log(A / eps) with a monomial A in H, d1, d2, alpha, L
(and, for Theorem 14, the block index b and the number of blocks B):

- Theorem 3/9 (MHA):   n_K >= d1 C log(8 H alpha^3 d1^{3/2} / eps),
                       n_V >= d1 C log(2 H alpha d1 sqrt(d2) / eps).
- Theorem 11 (block):  n_MHA >= d1 C log(32 alpha^3 H d1^{3/2} / eps),
                       n_FC  >= d1 C log(24 alpha L H d1^{5/2} / eps)   (d2 = d1 there).
- Theorem 6/14 (B blocks, B >= 2): block b runs Theorem 11 at eps / K_b with
  K_1 = 2^{B-1} prod_{j=2}^B 16 H sqrt(d1) beta_j^2, K_b = 2^{B-b+1} prod_{j=b+1}^B 16 H sqrt(d1) beta_j^2,
  beta_b = alpha (4 H sqrt(d1))^{b-1}, and alpha_1 = alpha, alpha_b = 2 beta_b (b >= 2)::

      n_MHA^(b) >= d1 C log(32 alpha_b^3 H d1^{3/2} K_b / eps),
      n_FC^(b)  >= d1 C log(24 alpha_b L H d1^{5/2} K_b / eps).

  The exponents of 2, 3, alpha, L, H, d1 in these arguments (and f1..f3, g1..g3 of the
  statement, with c1 = max(2, alpha), c2 = max(3, alpha)) are those of
  :func:`sltcheck.statements.theorem14.exponents`, recomputed here independently
  (:func:`block_monomial`) and cross-checked in the tests.

Growth: every argument A is proportional to 1/eps, so d n / d log(1/eps) = d1 C for every
width; d n / d log H = d1 C (exponent of H); d n / d log d1 = n / d1 + d1 C (exponent of d1)
(alpha held fixed); likewise for alpha, d2, L. :func:`growth` reports these and the widths
when each parameter doubles (eps: doubled and halved).

The width is a real lower bound; ``ceil`` is the smallest integer width, and
``construction`` the smallest multiple of d1 (Lemma 7's construction uses n = d1 n').
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import mpmath

DPS = 40
MAX_BLOCKS = 1000  # Theorem 14's per-block table costs O(B^2) mpmath terms (B = 400: ~5 s)
MAX_SIZE = 10**12  # H, d1, d2, L: the formulas are closed forms, but beyond this nothing is meaningful


def _check(eps: float, H: int, d1: int, d2: int, alpha: float | None, L: int, B: int | None, C: float) -> float:
    def integer(name: str, value: object, least: int, most: int = MAX_SIZE) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= most:
            raise ValueError(f"{name} must be an integer from {least} to {most}, got {value!r}")

    if not isinstance(eps, (int, float)) or isinstance(eps, bool) or not 0 < eps < 1:
        raise ValueError(f"eps must be a number in the open interval (0, 1), got {eps!r}")
    integer("H", H, 1)
    integer("d1", d1, 1)
    integer("d2", d2, 1)
    integer("L", L, 1)
    if B is not None:
        integer("B", B, 2, MAX_BLOCKS)
    if not isinstance(C, (int, float)) or isinstance(C, bool) or not (C > 0 and math.isfinite(C)):
        raise ValueError(f"C must be a finite number > 0, got {C!r}")
    least = max(math.sqrt(d1), math.sqrt(d2))
    if alpha is None:
        return least
    if not isinstance(alpha, (int, float)) or isinstance(alpha, bool) or not math.isfinite(alpha) or alpha < least:
        raise ValueError(f"alpha must be a finite number >= max(sqrt(d1), sqrt(d2)) = {least:.6g}, got {alpha!r}")
    return float(alpha)


def _width(d1: int, C: float, log_argument: Any) -> dict[str, Any]:
    value = d1 * C * mpmath.log(log_argument)
    real = float(value)
    if not math.isfinite(real):
        exact = mpmath.nstr(mpmath.mpf(d1) * C * mpmath.log(log_argument), 6)
        raise ValueError(f"C: the width d1 * C * log(...) = {exact} (d1 = {d1}, C = {C!r}) exceeds the largest "
                         "float64; give a smaller C")
    ceil = max(1, math.ceil(real))
    return {"bound": real, "ceil": ceil, "construction": d1 * math.ceil(ceil / d1), "log_argument": float(log_argument)}


# --- exponents of the Theorem 14 arguments ---------------------------------------------------------


def block_monomial(b: int, B: int) -> dict[str, dict[str, Fraction]]:
    """Exponents of 2, 3, alpha, L, H, d1 in the log arguments (times eps) of n_MHA^(b), n_FC^(b).

    From the proof: beta_j = alpha (4 H sqrt(d1))^{j-1} = 2^{2(j-1)} alpha H^{j-1} d1^{(j-1)/2};
    16 H sqrt(d1) beta_j^2 = 2^{4 + 4(j-1)} alpha^2 H^{1 + 2(j-1)} d1^{1/2 + (j-1)}.
    """
    if not (isinstance(B, int) and B >= 2):
        raise ValueError(f"B must be an integer >= 2 (Theorem 14 assumes B >= 2), got {B!r}")
    if not (isinstance(b, int) and 1 <= b <= B):
        raise ValueError(f"b must be an integer in 1..B = 1..{B}, got {b!r}")
    K = {"2": Fraction(B - 1 if b == 1 else B - b + 1), "alpha": Fraction(0), "H": Fraction(0), "d1": Fraction(0)}
    for j in range(b + 1, B + 1):
        K["2"] += 4 + 4 * (j - 1)
        K["alpha"] += 2
        K["H"] += 1 + 2 * (j - 1)
        K["d1"] += Fraction(1, 2) + (j - 1)
    # alpha_b = alpha (b = 1) or 2 beta_b = 2^{1 + 2(b-1)} alpha H^{b-1} d1^{(b-1)/2}
    a2 = Fraction(0 if b == 1 else 1 + 2 * (b - 1))
    aH, ad = Fraction(b - 1), Fraction(b - 1, 2)
    mha = {"2": 5 + 3 * a2 + K["2"], "3": Fraction(0), "alpha": 3 + K["alpha"], "L": Fraction(0),
           "H": 1 + 3 * aH + K["H"], "d1": Fraction(3, 2) + 3 * ad + K["d1"]}
    fc = {"2": 3 + a2 + K["2"], "3": Fraction(1), "alpha": 1 + K["alpha"], "L": Fraction(1),
          "H": 1 + aH + K["H"], "d1": Fraction(5, 2) + ad + K["d1"]}
    return {"mha": mha, "fc": fc}


def statement_exponents(b: int, B: int) -> dict[str, Fraction]:
    """f1..f3, g1..g3 of Theorem 14 with c1 = max(2, alpha), c2 = max(3, alpha)."""
    m = block_monomial(b, B)
    return {"f1": m["mha"]["2"] + m["mha"]["alpha"], "f2": m["mha"]["H"], "f3": m["mha"]["d1"],
            "g1": m["fc"]["2"] + m["fc"]["3"] + m["fc"]["alpha"], "g2": m["fc"]["H"], "g3": m["fc"]["d1"]}


def _monomial_value(exps: dict[str, Fraction], alpha: Any, L: int, H: int, d1: int) -> Any:
    bases = {"2": mpmath.mpf(2), "3": mpmath.mpf(3), "alpha": mpmath.mpf(alpha), "L": mpmath.mpf(L),
             "H": mpmath.mpf(H), "d1": mpmath.mpf(d1)}
    out = mpmath.mpf(1)
    for key, e in exps.items():
        out *= bases[key] ** (mpmath.mpf(e.numerator) / e.denominator)
    return out


# --- the calculator --------------------------------------------------------------------------------


def widths(
    eps: float,
    H: int,
    d1: int,
    d2: int | None = None,
    alpha: float | None = None,
    L: int = 1,
    B: int | None = None,
    C: float = 1.0,
) -> dict[str, Any]:
    """All widths for the given parameters (Theorem 14's per-block widths only when B is given)."""
    d2 = d1 if d2 is None else d2
    a = _check(eps, H, d1, d2, alpha, L, B, C)
    out: dict[str, Any] = {"parameters": {"eps": eps, "H": H, "d1": d1, "d2": d2, "alpha": a, "L": L, "B": B, "C": C}}
    with mpmath.workdps(DPS):
        e, al, r1 = mpmath.mpf(eps), mpmath.mpf(a), mpmath.sqrt(d1)
        out["theorem9"] = {
            "n_K": _width(d1, C, 8 * H * al**3 * d1 * r1 / e),
            "n_V": _width(d1, C, 2 * H * al * d1 * mpmath.sqrt(d2) / e),
        }
        t11: dict[str, Any] = {
            "n_MHA": _width(d1, C, 32 * al**3 * H * d1 * r1 / e),
            "n_FC": _width(d1, C, 24 * al * L * H * d1 * d1 * r1 / e),
        }
        if d2 != d1:
            t11["note"] = f"Theorem 11 assumes d2 = d1; evaluated with d1 = {d1}"
        out["theorem11"] = t11
        if B is not None:
            blocks = []
            for b in range(1, B + 1):
                mono = block_monomial(b, B)
                blocks.append({
                    "b": b,
                    "n_MHA": _width(d1, C, _monomial_value(mono["mha"], al, L, H, d1) / e),
                    "n_FC": _width(d1, C, _monomial_value(mono["fc"], al, L, H, d1) / e),
                    "exponents": {k: str(v) for k, v in statement_exponents(b, B).items()},
                    "monomial": {part: {k: str(v) for k, v in mono[part].items()} for part in ("mha", "fc")},
                })
            out["theorem14"] = {"blocks": blocks, "c1": max(2.0, a), "c2": max(3.0, a)}
    return out


def _names(result: dict[str, Any]) -> list[tuple[str, Any]]:
    rows = [("theorem9.n_K", result["theorem9"]["n_K"]), ("theorem9.n_V", result["theorem9"]["n_V"]),
            ("theorem11.n_MHA", result["theorem11"]["n_MHA"]), ("theorem11.n_FC", result["theorem11"]["n_FC"])]
    for block in result.get("theorem14", {}).get("blocks", []):
        rows.append((f"theorem14.n_MHA[{block['b']}]", block["n_MHA"]))
        rows.append((f"theorem14.n_FC[{block['b']}]", block["n_FC"]))
    return rows


def exponents_of(result: dict[str, Any]) -> dict[str, dict[str, Fraction]]:
    """Per width: the exponent of each parameter (H, d1, d2, alpha, L) in its log argument."""
    F = Fraction
    out = {
        "theorem9.n_K": {"H": F(1), "d1": F(3, 2), "d2": F(0), "alpha": F(3), "L": F(0)},
        "theorem9.n_V": {"H": F(1), "d1": F(1), "d2": F(1, 2), "alpha": F(1), "L": F(0)},
        "theorem11.n_MHA": {"H": F(1), "d1": F(3, 2), "d2": F(0), "alpha": F(3), "L": F(0)},
        "theorem11.n_FC": {"H": F(1), "d1": F(5, 2), "d2": F(0), "alpha": F(1), "L": F(1)},
    }
    B = result["parameters"]["B"]
    for block in result.get("theorem14", {}).get("blocks", []):
        mono = block_monomial(block["b"], B)
        for part, key in (("mha", "n_MHA"), ("fc", "n_FC")):
            m = mono[part]
            out[f"theorem14.{key}[{block['b']}]"] = {"H": m["H"], "d1": m["d1"], "d2": F(0), "alpha": m["alpha"],
                                                    "L": m["L"]}
    return out


def growth(
    eps: float,
    H: int,
    d1: int,
    d2: int | None = None,
    alpha: float | None = None,
    L: int = 1,
    B: int | None = None,
    C: float = 1.0,
) -> dict[str, Any]:
    """Per width n = d1 C log(A / eps): the sensitivities d n / d log p, exact from the exponents
    k_p of p in A (d1 C k_p; for p = d1 it is n + d1 C k_d1; for 1/eps it is d1 C), with alpha
    held at its value; and the widths when each parameter doubles (eps also halved; d1, d2
    doubling raises alpha to max(alpha, sqrt(2 d)) when needed)."""
    base = widths(eps, H, d1, d2, alpha, L, B, C)
    params = dict(base["parameters"])
    bounds = {n: w["bound"] for n, w in _names(base)}
    derivative: dict[str, dict[str, float]] = {}
    for name, ks in exponents_of(base).items():
        row = {"log(1/eps)": d1 * C}
        for key in ("H", "d2", "alpha", "L"):
            row[f"log({key})"] = float(d1 * C * ks[key])
        row["log(d1)"] = float(bounds[name] + d1 * C * ks["d1"])
        derivative[name] = row

    def evaluate(**change: Any) -> dict[str, float]:
        p = dict(params)
        p.update(change)
        return {n: w["bound"] for n, w in _names(widths(**p))}

    doubled: dict[str, dict[str, float]] = {}
    for key in ("H", "d1", "d2", "L"):
        alpha_new = max(params["alpha"], math.sqrt(2 * params[key])) if key in ("d1", "d2") else params["alpha"]
        doubled[f"{key}x2"] = evaluate(**{key: 2 * params[key], "alpha": alpha_new})
    doubled["alphax2"] = evaluate(alpha=2 * params["alpha"])
    if params["B"] is not None:
        doubled["Bx2"] = evaluate(B=2 * params["B"])
    if 2 * eps < 1:
        doubled["epsx2"] = evaluate(eps=2 * eps)
    doubled["eps/2"] = evaluate(eps=eps / 2)
    return {"parameters": params, "widths": bounds, "derivative": derivative, "doubled": doubled}


def table(result: dict[str, Any]) -> str:
    """A plain-text table of a :func:`widths` result."""
    lines = [f"{'width':<22}{'bound':>14}{'ceil':>10}{'multiple of d1':>16}  log argument"]
    for name, w in _names(result):
        lines.append(f"{name:<22}{w['bound']:>14.4f}{w['ceil']:>10d}{w['construction']:>16d}  {w['log_argument']:.6g}")
    for block in result.get("theorem14", {}).get("blocks", []):
        ex = block["exponents"]
        lines.append(f"  block {block['b']}: f1..f3 = {ex['f1']}, {ex['f2']}, {ex['f3']};  "
                     f"g1..g3 = {ex['g1']}, {ex['g2']}, {ex['g3']}")
    return "\n".join(lines)
