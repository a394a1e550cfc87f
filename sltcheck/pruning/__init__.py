"""Pruning: the subset-sum solvers, the paper's construction, random sources, Lemma 7's calibration, widths."""
