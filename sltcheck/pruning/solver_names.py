"""Names and caps of the subset-sum solvers, importable without numpy, mpmath or numba.

The command line builds its parser from these (``sltcheck --help`` must stay light);
:mod:`sltcheck.pruning.subset_sum` implements the solvers.
"""

from __future__ import annotations

SOLVERS: tuple[str, ...] = ("mitm", "exact", "fast", "gurobi", "highs", "cvxpy", "greedy", "brute")
EXACT_SOLVERS: tuple[str, ...] = ("mitm", "brute", "exact", "fast")  # their certificates are exact
SLICED_SOLVERS: tuple[str, ...] = ("exact", "fast")
MIP_SOLVERS: tuple[str, ...] = ("gurobi", "highs", "cvxpy")
# Certificates: "optimal" (exactly proven), "float64-floor" (exact error <= float64_floor),
# "gap" (an exact solver stopped where a stated budget ran out, --time-limit or fast mode's
# tolerance, with a proven lower bound on the optimum), "mip-optimal" (a MIP solver's OPTIMAL
# status, up to its tolerances), "none" (greedy, a MIP solver without OPTIMAL status, or a claim
# the exact check refused: never from an exact solver's own search).
CERTIFICATES: tuple[str, ...] = ("optimal", "float64-floor", "gap", "mip-optimal", "none")
MITM_MAX_CANDIDATES = 50  # 2^25 sums per half: about 1 GiB of working memory
BRUTE_MAX_CANDIDATES = 20
