"""Theorem 11's formulas in LaTeX, for the report (typeset as MathML by :mod:`sltcheck.report.formulas`).

``PAPER``: the inequality as the paper prints it; ``MEASURED``: the side sltcheck measures; ``BOUNDS``: each
variant's bound as encoded (``WHERE``: what its symbols stand for).
"""

PAPER = (r"\max_{i \in [T]} \left\| \mathrm{Blk}_S(x_i) - \mathrm{Blk}_T(x_i) \right\| \le \epsilon "
         r"\quad \text{w.p.} \ge 1 - \epsilon, \text{ if } n_{MHA} \ge d_1 C \log\left(\frac{32 \alpha^3 H "
         r"d_1^{3/2}}{\epsilon}\right), \; n_{FC} \ge d_1 C \log\left(\frac{24 \alpha L H d_1^{5/2}}{\epsilon}\right)")
MEASURED = r"\max_{i \in [T]} \left\| \mathrm{Blk}_S(x_i) - \mathrm{Blk}_T(x_i) \right\|"
_CHAIN = r"2 A + r \left( \prod_{l=1}^{L} (1 + \delta_l) - 1 \right)"
BOUNDS = {
    "as-proven": _CHAIN,
    "theorem10-literal": r"2 A + e^{r \epsilon_{10} / 2} - 1",
    "theorem10-scaled": r"2 A + r \left(e^{\epsilon_{10} / 2} - 1\right)",
    "as-stated": (r"\epsilon^{*} = \max\left(32 H \alpha^3 d_1^{3/2} e_{QK},\; 8 H \alpha d_1^{3/2} e_{VO},\; "
                  r"24 \alpha L H \sqrt{d_1}\, d_l d_{l+1} e_l\right)"),
    "tight": _CHAIN + r" \text{ (actual norms)}",
    "sharp": _CHAIN + r" \text{ (actual norms, Theorem 9's sharp } A\text{)}",
}
WHERE = (r"A: \text{Theorem 9's chain;}\; r = \max\left(3 \alpha H \sqrt{d_1},\, A + \alpha (H \sqrt{d_1} + 1)"
         r"\right);\; \delta_l = \sqrt{d_l d_{l+1}}\, e_l;\; \epsilon_{10} = \max_l 4 L d_l d_{l+1} e_l")
