"""Reproduction mode II: edge-popup strong lottery tickets in GPT-2 with
query/key scaling (Section 4.3, Figures 7 and 8; Appendix B.2).

Modules: :mod:`~sltcheck.repro.lm.edgepopup` (score masks), :mod:`~sltcheck.repro.lm.model`
(GPT-2 presets, initialisation, wrappers), :mod:`~sltcheck.repro.lm.data` (WikiText,
tokenizer, packing), :mod:`~sltcheck.repro.lm.train` (resumable training),
:mod:`~sltcheck.repro.lm.sweeps` (Figures 7/8), :mod:`~sltcheck.repro.lm.bench` (step time),
:mod:`sltcheck.cli.lm` (commands). Requires the ``lm`` extra
(``torch``, ``transformers``, ``tokenizers``).
"""

from sltcheck.extras import require

require("torch", "lm", "The GPT-2 experiment (sltcheck repro fig7|fig8, sltcheck bench lm-step)")

