"""Lemma 8's formulas in LaTeX, for the report (typeset as MathML by :mod:`sltcheck.report.formulas`).

``PAPER``: the inequality as the paper prints it; ``MEASURED``: the side sltcheck measures; ``BOUNDS``: each
variant's bound as encoded (``WHERE``: what its symbols stand for).
"""

PAPER = (r"\left\| \sigma(x_i; a_i) X - \sigma(x_i + \epsilon; a_i) X \right\| \le \sqrt{d_1}\, \alpha "
         r"\left(e^{2 \epsilon_{\max}} - 1\right)")
MEASURED = r"\max_i \left\| \sigma(x_i; a_i) X - \sigma(x_i + \epsilon_i; a_i) X \right\|"
BOUNDS = {"as-stated": r"\sqrt{d_1}\, \alpha \left(e^{2 \epsilon_{\max}} - 1\right)"}
WHERE = r"\epsilon_i \in \mathbb{R}^T \text{ (one entry per logit of row } i\text{)}"
