"""Lemma 7's formulas in LaTeX, for the report (typeset as MathML by :mod:`sltcheck.report.formulas`).

``PAPER``: the inequality as the paper prints it; ``MEASURED``: the side sltcheck measures; ``BOUNDS``: each
variant's bound as encoded (``WHERE``: what its symbols stand for).
"""

PAPER = (r"\left\| W - (\tilde{W}_2 \odot M_2)(\tilde{W}_1 \odot M_1) \right\|_{\max} \le \frac{\epsilon}{d_1 d_2}"
         r" \quad \text{w.p.} \ge 1 - \epsilon, \text{ if } n \ge d_1 C \log\left(\frac{d_1 d_2}{\epsilon}\right)")
MEASURED = r"\min_{M_1, M_2} \left\| W - (\tilde{W}_2 \odot M_2)(\tilde{W}_1 \odot M_1) \right\|_{\max}"
BOUNDS = {"construction": r"\left\| W - (\tilde{W}_2 \odot M_2^{*})(\tilde{W}_1 \odot M_1^{*}) \right\|_{\max}"}
WHERE = r"M_1^{*}, M_2^{*}: \text{the masks of the proof's construction, Eqs. (6)-(8)}"
