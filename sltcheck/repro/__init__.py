"""Reproductions of the paper's experiments.

Synthetic (Appendix B.1, Figures 4-6): :mod:`sltcheck.repro.synthetic`.
Language modelling (Appendix B.2, Figures 7-8): :mod:`sltcheck.lm`.
"""
