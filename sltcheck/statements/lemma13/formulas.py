"""Lemma 13's formulas in LaTeX, for the report (typeset as MathML by :mod:`sltcheck.report.formulas`).

``PAPER``: the inequality as the paper prints it; ``MEASURED``: the side sltcheck measures; ``BOUNDS``: each
variant's bound as encoded (``WHERE``: what its symbols stand for).
"""

PAPER = (r"\left\| \mathrm{Blk}_T(x_i) - \mathrm{Blk}_T(x'_i) \right\| \le H \sqrt{d_1} \left(\alpha "
         r"\left(e^{4 \alpha \epsilon_{\max}} - 1\right) + 2 \epsilon_{\max}\right)")
MEASURED = r"\max_i \left\| \mathrm{Blk}_T(x_i) - \mathrm{Blk}_T(x'_i) \right\|"
BOUNDS = {
    "as-proven": (r"2 H \sqrt{d_1} \left(\alpha \left(e^{4 \alpha \epsilon_{\max}} - 1\right) "
                  r"+ 2 \epsilon_{\max}\right)"),
    "as-stated": r"H \sqrt{d_1} \left(\alpha \left(e^{4 \alpha \epsilon_{\max}} - 1\right) + 2 \epsilon_{\max}\right)",
}
