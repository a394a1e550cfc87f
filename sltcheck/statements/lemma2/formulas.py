"""Lemma 2's formulas in LaTeX, for the report (typeset as MathML by :mod:`sltcheck.report.formulas`).

``PAPER``: the inequality as the paper prints it; ``MEASURED``: the side sltcheck measures; ``BOUNDS``: each
variant's bound as encoded (``WHERE``: what its symbols stand for).
"""

PAPER = (r"\|F_T(x) - F_S(x)\| \le \epsilon \quad \text{w.p.} \ge 1 - \epsilon, \text{ if } "
         r"n \ge d_1 C \log\left(\frac{2 d_1 d_2}{\epsilon}\right)")
MEASURED = r"\max_{\|x\| \le 1} \|W x - F_S(x)\|"
BOUNDS = {"as-proven": r"\sqrt{d_1 d_2}\, e"}
WHERE = r"e = \max\left(\|P - W\|_{\max}, \|N - W\|_{\max}\right)"
