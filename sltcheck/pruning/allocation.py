"""The proofs' allocation of the failure probability eps, in exact rational arithmetic.

Every main result says "with probability >= 1 - eps". Each proof splits eps among the
subset-sum problems it solves (per matrix entry, per merged matrix, per head, per layer, per
block) and adds the failure probabilities by the union bound. Here each split is written out
term by term as the paper writes it (variant ``as-written``) and as corrected where it slips
(each slip a named variant citing the proof step it corrects), summed in
:class:`fractions.Fraction` and compared with eps exactly. Square roots must be exact, so
d1 and d2 are perfect squares and alpha, eps rationals (a ``ValueError`` says so otherwise).

Besides the sums, each Lemma 7 application is checked against the width it is given: Lemma 7
at failure eps' on a d_out x d_in matrix needs n >= d_in C log(d_in d_out / eps'), so the
width's log argument must equal d_in d_out / eps' (``width_matches``).

Slips found (each a variant; all corrected sums are still <= eps):

- ``theorem9`` ``qk-failure`` (Theorem 9's proof, Step 2, Appendix A.3): Lemma 7 on the d1 x d1 W_QK at max-norm error
  eps / (8 H alpha^3 d1^{3/2}) fails with probability eps' = d1^2 x that = sqrt(d1) eps /
  (8 H alpha^3); the paper writes eps / (8 H alpha^3 sqrt(d1)) (a factor d1 too small). The
  prescribed width log(8 H alpha^3 d1^{3/2} / eps) is the one of the corrected eps'.
- ``theorem9`` ``heads-summed`` (the union bound closing Theorem 9's proof, Appendix A.3): it adds one
  W_QK and one W_VO failure, but Step 2 prunes every head: there are H of each. Corrected total
  eps (sqrt(d1) / (8 alpha^3) + sqrt(d2) / (2 alpha)) <= 5/8 eps (alpha >= sqrt(d1), sqrt(d2)).
- ``theorem14`` ``closed-form`` ("Success Probability of the Approximation", Theorem 14's proof,
  Appendix A.5): "1/(2 (1 - 1/32)) = 16/32" is false (it is 16/31);
  the next line's 1 - 1055/1984 eps = 1 - (1/64 + 16/31) eps uses 16/31, so only the
  displayed 16/32 slips. The same display writes prod_{j=2}^k where prod_{j=2}^B is meant.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

# Where each term stands in the paper (section, proof step, equation): a reader with the paper follows these.
LEMMA7_PROOF = "Lemma 7's proof (Appendix A.1)"
LEMMA2 = "Lemma 2 (Section 2.1)"
THEOREM9_STEP2 = "Theorem 9's proof, Step 2 (Appendix A.3)"
THEOREM9_UNION = "Theorem 9's proof, the union bound after Eq. (17) (Appendix A.3)"
THEOREM10 = "Theorem 10 (Appendix A.4)"
THEOREM11_PROOF = "Theorem 11's proof (Appendix A.4)"
THEOREM14_PROOF = "Theorem 14's proof (Appendix A.5)"
THEOREM14_CLOSED = "Theorem 14's proof, \"Success Probability of the Approximation\" (Appendix A.5)"


@dataclass(frozen=True)
class Term:
    """One failure probability of the union bound."""

    name: str
    failure: Fraction  # as a multiple of eps is not assumed: the value itself
    source: str  # where the paper allocates it
    width_argument: Fraction | None = None  # d_in d_out / eps' of its Lemma 7 application
    prescribed_argument: Fraction | None = None  # the log argument of the width the proof prescribes

    @property
    def width_matches(self) -> bool | None:
        if self.width_argument is None or self.prescribed_argument is None:
            return None
        return self.width_argument == self.prescribed_argument


@dataclass(frozen=True)
class Allocation:
    statement: str
    variant: str
    eps: Fraction
    terms: tuple[Term, ...]
    slip: str  # what this variant corrects ("" for as-written)

    @property
    def total(self) -> Fraction:
        return sum((t.failure for t in self.terms), Fraction(0))

    @property
    def holds(self) -> bool:
        return self.total <= self.eps

    def as_dict(self) -> dict[str, Any]:
        return {
            "statement": self.statement,
            "variant": self.variant,
            "slip": self.slip,
            "eps": str(self.eps),
            "total": str(self.total),
            "total_over_eps": str(self.total / self.eps),
            "total_over_eps_float": float(self.total / self.eps),
            "holds": self.holds,
            "terms": [
                {"name": t.name, "failure": str(t.failure), "source": t.source, "width_matches": t.width_matches}
                for t in self.terms
            ],
        }


@dataclass(frozen=True)
class Step:
    """One (in)equality of a displayed chain, checked exactly."""

    statement: str
    source: str
    claim: str
    left: Fraction
    right: Fraction
    relation: str  # "=" or "<="

    @property
    def holds(self) -> bool:
        return self.left == self.right if self.relation == "=" else self.left <= self.right

    def as_dict(self) -> dict[str, Any]:
        return {
            "statement": self.statement,
            "source": self.source,
            "claim": self.claim,
            "left": str(self.left),
            "right": str(self.right),
            "relation": self.relation,
            "holds": self.holds,
        }


# --- exact parameters -----------------------------------------------------------------------------


def _rational(name: str, value: object, low: Fraction | None = None, high: Fraction | None = None) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, (int, float, Fraction, str)):
        raise ValueError(f"{name} must be a rational number (int, float, Fraction or 'p/q'), got {value!r}")
    try:
        out = Fraction(value)
    except (ValueError, ZeroDivisionError) as error:
        raise ValueError(f"{name} must be a rational number, got {value!r}") from error
    if (low is not None and out <= low) or (high is not None and out >= high):
        raise ValueError(f"{name} must lie in the open interval ({low}, {high}), got {value!r}")
    return out


def _count(name: str, value: object, least: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ValueError(f"{name} must be an integer >= {least}, got {value!r}")
    return value


def exact_root(name: str, value: int) -> Fraction:
    """sqrt(value) as an exact rational; a ValueError unless value is a perfect square."""
    root = math.isqrt(_count(name, value))
    if root * root != value:
        raise ValueError(f"{name} must be a perfect square (1, 4, 9, ...) for exact arithmetic, got {value!r}")
    return Fraction(root)


@dataclass(frozen=True)
class Parameters:
    eps: Fraction
    H: int
    d1: int
    d2: int
    alpha: Fraction
    L: int
    B: int

    @property
    def s1(self) -> Fraction:
        return exact_root("d1", self.d1)

    @property
    def s2(self) -> Fraction:
        return exact_root("d2", self.d2)


def parameters(
    eps: object, H: int = 1, d1: int = 1, d2: int | None = None, alpha: object | None = None, L: int = 1, B: int = 2
) -> Parameters:
    """Exact parameters; alpha defaults to max(sqrt(d1), sqrt(d2)), the smallest the theorems allow."""
    e = _rational("eps", eps, Fraction(0), Fraction(1))
    d2 = d1 if d2 is None else d2
    s1, s2 = exact_root("d1", d1), exact_root("d2", d2)
    least = max(s1, s2)
    a = least if alpha is None else _rational("alpha", alpha)
    if a < least:
        raise ValueError(f"alpha must be >= max(sqrt(d1), sqrt(d2)) = {least}, got {alpha!r}")
    return Parameters(e, _count("H", H), d1, d2, a, _count("L", L), _count("B", B, 2))


# --- the allocations ------------------------------------------------------------------------------


def lemma7(p: Parameters) -> list[Allocation]:
    """Lemma 7 (its proof, Appendix A.1): d1 d2 entries, each failing with eps / (d1 d2) (Lueker per entry)."""
    terms = tuple(
        Term(f"entry ({i}, {j})", p.eps / (p.d1 * p.d2), f"{LEMMA7_PROOF} (Lueker, per entry)")
        for i in range(p.d2)
        for j in range(p.d1)
    )
    return [Allocation("lemma7", "as-written", p.eps, terms, "")]


def lemma2(p: Parameters) -> list[Allocation]:
    """Lemma 2 / Pensia et al.: 2 d1 d2 subset sums (the positive and negative parts of every
    entry), each at eps / (2 d1 d2), which is what the width log(2 d1 d2 / eps) (Lemma 2, Section 2.1) buys."""
    terms = tuple(
        Term(f"{part} part of entry ({i}, {j})", p.eps / (2 * p.d1 * p.d2), f"{LEMMA2} (width log(2 d1 d2/eps))")
        for part in ("positive", "negative")
        for i in range(p.d2)
        for j in range(p.d1)
    )
    return [Allocation("lemma2", "as-written", p.eps, terms, "")]


def _theorem10_terms(p: Parameters, eps: Fraction, label: str) -> tuple[Term, ...]:
    """Theorem 10 (Appendix A.4): layer l at width log(4 L d_l d_(l+1) / eps) = Lemma 2 at eps / (2L)."""
    return tuple(
        Term(f"{label}FC layer {layer}", eps / (2 * p.L), f"{THEOREM10} (width log(4 L d_l d_(l+1)/eps))")
        for layer in range(1, p.L + 1)
    )


def _theorem9_terms(
    p: Parameters, eps: Fraction, *, heads: bool, qk_corrected: bool, label: str = ""
) -> tuple[Term, ...]:
    H, a, s1, s2 = p.H, p.alpha, p.s1, p.s2
    qk_error = eps / (8 * H * a**3 * p.d1 * s1)  # Eq. (14)
    qk_lemma7 = qk_error * p.d1 * p.d1  # Lemma 7's eps' on the d1 x d1 W_QK
    qk_failure = qk_lemma7 if qk_corrected else eps / (8 * H * a**3 * s1)
    vo_failure = eps * s2 / (2 * H * a)  # Step 2 of Theorem 9's proof (Lemma 7 on W_VO gives exactly this)
    qk_prescribed = 8 * H * a**3 * p.d1 * s1 / eps  # n_K's log argument (Step 2)
    vo_prescribed = 2 * H * a * p.d1 * s2 / eps  # n_V's (Step 2)
    count = H if heads else 1
    out = []
    for j in range(1, count + 1):
        head = f" head {j}" if heads else ""
        out.append(
            Term(
                f"{label}W_QK{head}",
                qk_failure,
                f"{THEOREM9_STEP2}, W_QK" if not qk_corrected else "Lemma 7 at Eq. (14)",
                p.d1 * p.d1 / qk_failure,
                qk_prescribed,
            )
        )
        out.append(Term(f"{label}W_VO{head}", vo_failure, f"{THEOREM9_STEP2}, W_VO", p.d1 * p.d2 / vo_failure,
                        vo_prescribed))
    return tuple(out)


def theorem9(p: Parameters) -> list[Allocation]:
    eps = p.eps
    return [
        Allocation("theorem9", "as-written", eps, _theorem9_terms(p, eps, heads=False, qk_corrected=False), ""),
        Allocation(
            "theorem9",
            "heads-summed",
            eps,
            _theorem9_terms(p, eps, heads=True, qk_corrected=False),
            f"{THEOREM9_UNION} sums one W_QK and one W_VO failure; every one of the H heads has both",
        ),
        Allocation(
            "theorem9",
            "corrected",
            eps,
            _theorem9_terms(p, eps, heads=True, qk_corrected=True),
            f"{THEOREM9_UNION} (H heads) and {THEOREM9_STEP2} (Lemma 7 on d1 x d1 W_QK fails w.p. "
            "sqrt(d1) eps/(8 H alpha^3))",
        ),
    ]


def theorem11(p: Parameters) -> list[Allocation]:
    """Theorem 11's proof (its union bound, Appendix A.4): Theorem 9 at eps/4, Theorem 10 at
    eps/(6 alpha H sqrt(d1))."""
    eps, a = p.eps, p.alpha
    fc = eps / (6 * a * p.H * p.s1)
    written = (Term("Theorem 9 (MHA)", eps / 4, f"{THEOREM11_PROOF}, Theorem 9 at eps/4"),
               Term("Theorem 10 (FC)", fc, f"{THEOREM11_PROOF}, Theorem 10 after Eq. (19)"))
    expanded = _theorem9_terms(p, eps / 4, heads=True, qk_corrected=True, label="MHA ") + _theorem10_terms(p, fc, "")
    return [
        Allocation("theorem11", "as-written", eps, written, ""),
        Allocation(
            "theorem11",
            "expanded",
            eps,
            expanded,
            "Theorems 9 (corrected) and 10 written out to their subset-sum problems",
        ),
    ]


def betas(p: Parameters) -> list[Fraction]:
    """beta_1 .. beta_B: beta_b = alpha (4 H sqrt(d1))^(b-1) (Theorem 14's notation)."""
    return [p.alpha * (4 * p.H * p.s1) ** (b - 1) for b in range(1, p.B + 1)]


def block_divisors(p: Parameters) -> list[Fraction]:
    """K_1 .. K_B: block b runs Theorem 11 at eps / K_b (Theorem 14's proof, Appendix A.5:
    its first, second, third, ..., final block errors)."""
    beta, B = betas(p), p.B

    def prod(start: int) -> Fraction:
        out = Fraction(1)
        for j in range(start, B + 1):
            out *= 16 * p.H * p.s1 * beta[j - 1] ** 2
        return out

    return [Fraction(2) ** (B - 1) * prod(2)] + [Fraction(2) ** (B - b + 1) * prod(b + 1) for b in range(2, B + 1)]


def theorem14(p: Parameters) -> list[Allocation]:
    eps = p.eps
    K = block_divisors(p)

    def step(b: int) -> str:
        return "Final" if b == p.B else "First" if b == 1 else "Second" if b == 2 else "Third to (B-1)-th"

    written = tuple(Term(f"block {b}", eps / k, f'{THEOREM14_PROOF}, "{step(b)} Block Error"')
                    for b, k in enumerate(K, start=1))
    expanded: tuple[Term, ...] = ()
    for b, k in enumerate(K, start=1):
        block_params = Parameters(eps / k, p.H, p.d1, p.d1, p.alpha if b == 1 else 2 * betas(p)[b - 1], p.L, p.B)
        expanded += tuple(Term(f"block {b} {t.name}", t.failure, t.source) for t in theorem11(block_params)[1].terms)
    closed = (Term("the proof's final bound", Fraction(1055, 1984) * eps, THEOREM14_CLOSED),)
    return [
        Allocation("theorem14", "as-written", eps, written, ""),
        Allocation(
            "theorem14", "expanded", eps, expanded, "every block's Theorem 11 written out (corrected Theorem 9)"
        ),
        Allocation("theorem14", "closed-form", eps, closed,
                   f"{THEOREM14_CLOSED} prints 16/32 for 1/(2(1 - 1/32)) = 16/31"),
    ]


def theorem14_steps(p: Parameters) -> list[Step]:
    """The displayed chain of "Success Probability of the Approximation" (Theorem 14's proof), each
    (in)equality as a fraction of eps, checked exactly."""
    beta, B = betas(p), p.B
    K = block_divisors(p)
    exact = sum((1 / k for k in K), Fraction(0))
    factor = [32 * p.H * p.s1 * b**2 for b in beta]  # 32 H sqrt(d1) beta_j^2, j = 1..B (j >= 2 used)

    def prod(upto: int) -> Fraction:
        out = Fraction(1)
        for j in range(2, upto + 1):
            out *= factor[j - 1]
        return out

    P = prod(B)
    first = (2 + sum((prod(k) for k in range(2, B + 1)), Fraction(0))) / (2 * P)
    rest = (1 + sum((prod(k) for k in range(2, B + 1)), Fraction(0))) / (2 * P)
    r_B = 32 * p.H * p.alpha**2 * p.s1 * (4 * p.H * p.s1) ** B  # (16 H^2 d1)^(B/2) = (4 H sqrt(d1))^B
    steps = [
        Step(
            "theorem14",
            THEOREM14_CLOSED,
            "sum of the block failures = (2 + sum_k prod_{j<=k}) / (2 prod_{j<=B})",
            exact,
            first,
            "=",
        ),
        Step(
            "theorem14",
            THEOREM14_CLOSED,
            "1 / (2 prod_{j=2}^B 32 H sqrt(d1) beta_j^2) <= 1/64",
            1 / (2 * P),
            Fraction(1, 64),
            "<=",
        ),
        Step(
            "theorem14",
            THEOREM14_CLOSED,
            "1/(2 (1 - 1/32)) = 16/32 (as printed)",
            1 / (2 * (1 - Fraction(1, 32))),
            Fraction(16, 32),
            "=",
        ),
        Step(
            "theorem14",
            THEOREM14_CLOSED,
            "1/(2 (1 - 1/32)) = 16/31 (corrected)",
            1 / (2 * (1 - Fraction(1, 32))),
            Fraction(16, 31),
            "=",
        ),
        Step(
            "theorem14",
            THEOREM14_CLOSED,
            "1/64 + 16/31 = 1055/1984",
            Fraction(1, 64) + Fraction(16, 31),
            Fraction(1055, 1984),
            "=",
        ),
        Step(
            "theorem14",
            THEOREM14_CLOSED,
            "1/64 + 16/32 = 1055/1984 (as printed)",
            Fraction(1, 64) + Fraction(16, 32),
            Fraction(1055, 1984),
            "=",
        ),
        Step(
            "theorem14",
            THEOREM14_CLOSED,
            "(1 + sum_k prod_{j<=k}) / (2 prod_{j<=B}) <= 16/31",
            rest,
            Fraction(16, 31),
            "<=",
        ),
        Step("theorem14", THEOREM14_CLOSED, "sum of the block failures <= 1055/1984", exact, Fraction(1055, 1984),
             "<="),
    ]
    steps.append(
        Step(
            "theorem14",
            THEOREM14_CLOSED,
            "1 / (32 H alpha^2 sqrt(d1) (16 H^2 d1)^(B/2)) <= 1/32",
            1 / r_B,
            Fraction(1, 32),
            "<=",
        )
    )
    return steps


STATEMENTS = {"lemma2": lemma2, "lemma7": lemma7, "theorem9": theorem9, "theorem11": theorem11, "theorem14": theorem14}

DEFAULT_GRID: tuple[dict[str, Any], ...] = tuple(
    {"eps": eps, "H": H, "d1": d1, "L": L, "B": B}
    for eps in (Fraction(1, 2), Fraction(1, 100))
    for H in (1, 4)
    for d1 in (1, 4)
    for L in (1, 3)
    for B in (2, 3)
)


def check_all(grid: tuple[dict[str, Any], ...] = DEFAULT_GRID) -> dict[str, Any]:
    """Every allocation and every step of Theorem 14's chain on ``grid``; the worst total / eps per variant."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    steps: dict[str, dict[str, Any]] = {}
    for point in grid:
        p = parameters(**point)
        for name, build in STATEMENTS.items():
            for allocation in build(p):
                key = (name, allocation.variant)
                ratio = allocation.total / allocation.eps
                width = [t.width_matches for t in allocation.terms if t.width_matches is not None]
                row = rows.setdefault(
                    key,
                    {
                        "statement": name,
                        "variant": allocation.variant,
                        "slip": allocation.slip,
                        "worst_total_over_eps": ratio,
                        "worst_at": point,
                        "holds": True,
                        "widths_match": None,
                    },
                )
                if ratio > row["worst_total_over_eps"]:
                    row["worst_total_over_eps"], row["worst_at"] = ratio, point
                row["holds"] = row["holds"] and allocation.holds
                if width:
                    row["widths_match"] = (
                        all(width) if row["widths_match"] is None else row["widths_match"] and all(width)
                    )
        for step in theorem14_steps(p):
            entry = steps.setdefault(step.claim, {"claim": step.claim, "source": step.source, "holds": True})
            entry["holds"] = entry["holds"] and step.holds
    out_rows = []
    for row in rows.values():
        worst = row["worst_total_over_eps"]
        out_rows.append(
            dict(
                row,
                worst_total_over_eps=str(worst),
                worst_total_over_eps_float=float(worst),
                worst_at={k: str(v) for k, v in row["worst_at"].items()},
            )
        )
    return {
        "grid": [{k: str(v) for k, v in g.items()} for g in grid],
        "allocations": out_rows,
        "theorem14_steps": list(steps.values()),
    }


def format_table(result: dict[str, Any]) -> str:
    """The allocation table of :func:`check_all`, as plain text."""
    lines = [
        f"The proofs' allocation of eps (exact rationals, {len(result['grid'])} grid points; worst total / eps):",
        f"{'statement':<10} {'variant':<13} {'worst total/eps':>16} {'<= eps':>6} {'widths match':>12}  slip",
    ]
    for r in result["allocations"]:
        match = "-" if r["widths_match"] is None else ("yes" if r["widths_match"] else "NO")
        lines.append(
            f"{r['statement']:<10} {r['variant']:<13} {r['worst_total_over_eps']:>16} "
            f"{('yes' if r['holds'] else 'NO'):>6} {match:>12}  {r['slip']}"
        )
    lines.append("Theorem 14's closed form (its proof's success probability, Appendix A.5), each step on every "
                 "grid point:")
    for s in result["theorem14_steps"]:
        lines.append(f"  {'holds' if s['holds'] else 'FALSE':<6} {s['claim']}")
    return "\n".join(lines)
