"""Theorem 14's formulas in LaTeX, for the report (typeset as MathML by :mod:`sltcheck.report.formulas`).

``PAPER``: the inequality as the paper prints it; ``MEASURED``: the side sltcheck measures; ``BOUNDS``: each
variant's bound as encoded (``WHERE``: what its symbols stand for).
"""

PAPER = (r"\max_{i \in [T]} \left\| \mathrm{Tf}_S(x_i) - \mathrm{Tf}_T(x_i) \right\| \le \epsilon "
         r"\quad \text{w.p.} \ge 1 - \epsilon, \text{ if } n_{MHA}^{(b)} \ge d_1 C \log\left(\frac{c_1^{f_1(b,B)} "
         r"H^{f_2(b,B)} d_1^{f_3(b,B)}}{\epsilon}\right), \; n_{FC}^{(b)} \ge d_1 C \log\left(\frac{c_2^{g_1(b,B)} "
         r"L H^{g_2(b,B)} d_1^{g_3(b,B)}}{\epsilon}\right)")
MEASURED = r"\max_{i \in [T]} \left\| \mathrm{Tf}_S(x_i) - \mathrm{Tf}_T(x_i) \right\|"
_RECURSION = (r"\Delta_{B+1}, \quad \Delta_{b+1} \le \mathrm{L13}_b(\Delta_b) + \mathrm{T11}_b(\alpha_b), "
              r"\; \Delta_1 = 0")
BOUNDS = {
    "as-proven": _RECURSION + r" \text{ (Lemma 13 as proven: factor 2)}",
    "lemma13-as-stated": _RECURSION + r" \text{ (Lemma 13 as stated)}",
    "as-stated": r"\epsilon^{*} = \max_b K_b\, \epsilon^{*}_{11,b}(\alpha_b)",
    "tight": _RECURSION + r" \text{ (actual norms)}",
    "sharp": _RECURSION + r" \text{ (actual norms, no } \sqrt{d_1} \text{ factors)}",
}
WHERE = (r"\alpha_b = \max(2 \beta_b, \beta_b + \Delta_b),\; \beta_b = \alpha (4 H \sqrt{d_1})^{b-1},\; "
         r"K_1 = 2^{B-1} \prod_{j=2}^{B} 16 H \sqrt{d_1} \beta_j^2")
