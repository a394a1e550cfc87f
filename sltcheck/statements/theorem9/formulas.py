"""Theorem 9's formulas in LaTeX, for the report (typeset as MathML by :mod:`sltcheck.report.formulas`).

``PAPER``: the inequality as the paper prints it; ``MEASURED``: the side sltcheck measures; ``BOUNDS``: each
variant's bound as encoded (``WHERE``: what its symbols stand for).
"""

PAPER = (r"\max_{i \in [T]} \left\| \mathrm{Attn}_S(x_i) - \mathrm{Attn}_T(x_i) \right\| \le \epsilon "
         r"\quad \text{w.p.} \ge 1 - \epsilon, \text{ if } n_K \ge d_1 C \log\left(\frac{8 H \alpha^3 "
         r"d_1^{3/2}}{\epsilon}\right), \; n_V \ge d_1 C \log\left(\frac{2 H \alpha d_1 \sqrt{d_2}}{\epsilon}\right)")
MEASURED = r"\max_{i \in [T]} \left\| \mathrm{Attn}_S(x_i) - \mathrm{Attn}_T(x_i) \right\|"
BOUNDS = {
    "as-proven": (r"\sum_{j=1}^{H} \left[ \sqrt{d_1}\, \alpha \left(e^{2 \alpha^2 d_1 e_{QK}^{(j)}} - 1\right) "
                  r"+ d_1 \sqrt{d_2}\, \alpha\, e_{VO}^{(j)} \right]"),
    "as-stated": (r"\epsilon^{*} = \max_j \max\left(8 H \alpha^3 d_1^{3/2} e_{QK}^{(j)},\; 2 H \alpha d_1 "
                  r"\sqrt{d_2}\, e_{VO}^{(j)}\right) \text{ (where } \epsilon^{*} < 1\text{)}"),
    "tight": (r"\sum_{j=1}^{H} \left[ \sqrt{d_1}\, a \left(e^{2 a^2 \|\Delta W_{QK}^{(j)}\|} - 1\right) "
              r"\|W_{VO}^{(j)}\| + \sqrt{d_1}\, a\, \|\Delta W_{VO}^{(j)}\| \right]"),
    "sharp": (r"\sum_{j=1}^{H} \left[ a \left(e^{2 a^2 \|\Delta W_{QK}^{(j)}\|} - 1\right) \|W_{VO}^{(j)}\| "
              r"+ a\, \|\Delta W_{VO}^{(j)}\| \right]"),
}
WHERE = (r"e_{QK}^{(j)} = \|\Delta W_{QK}^{(j)}\|_{\max},\; e_{VO}^{(j)} = \|\Delta W_{VO}^{(j)}\|_{\max} "
         r"\text{ (Eqs. 14, 15), } a = \max_k \|x_k\|")
