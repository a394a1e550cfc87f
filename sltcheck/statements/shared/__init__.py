"""Code several statements share (not a statement: discovery skips this folder).

A statement folder imports only itself, this package, lower layers (numerics, model, pruning, the
harness's strategies and projections, certify's families) and, where its proof in the paper is built
on another statement's bound, that statement (the edges listed in ``tests/test_imports.py``).

- :mod:`.softmax_instances`: softmax instances (Lemmas 5 and 8).
- :mod:`.lipschitz`, :mod:`.lipschitz_instances`: the target MHA and block as Lipschitz maps and
  their instances (Lemmas 12 and 13).
- :mod:`.chain_instances`, :mod:`.chains`: a target and a pruned source (MHA, block, transformer) as
  instances, their output gap and the variants and mutants built from an error chain (Theorems 9,
  11 and 14).
- :mod:`.suprema`, :mod:`.suprema_search`: the pieces of every ``worst_case.py`` (argument checks,
  exact unit vectors and tokens, the result record; the multi-start search for a bracket's lower end).
"""
