"""Lemma 12's formulas in LaTeX, for the report (typeset as MathML by :mod:`sltcheck.report.formulas`).

``PAPER``: the inequality as the paper prints it; ``MEASURED``: the side sltcheck measures; ``BOUNDS``: each
variant's bound as encoded (``WHERE``: what its symbols stand for).
"""

PAPER = (r"\left\| \mathrm{Attn}_T(x_i) - \mathrm{Attn}_T(x'_i) \right\| \le H \sqrt{d_1} \left(\alpha "
         r"\left(e^{4 \alpha \epsilon_{\max}} - 1\right) + \epsilon_{\max}\right)")
MEASURED = r"\max_i \left\| \mathrm{Attn}_T(x_i) - \mathrm{Attn}_T(x'_i) \right\|"
BOUNDS = {
    "as-stated": r"H \sqrt{d_1} \left(\alpha \left(e^{4 \alpha \epsilon_{\max}} - 1\right) + \epsilon_{\max}\right)",
    "key-scaled": (r"H \sqrt{d_1} \left(\alpha \left(e^{4 \alpha \epsilon_{\max} / \sqrt{d_K}} - 1\right) "
                   r"+ \epsilon_{\max}\right)"),
}
