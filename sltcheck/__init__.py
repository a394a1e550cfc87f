"""sltcheck: the strong lottery ticket hypothesis for multi-head attention, made executable.

The specification is Otsuka et al., "The Strong Lottery Ticket Hypothesis for
Multi-Head Attention Mechanisms" (arXiv 2511.04217, AAAI 2026).
"""

__version__ = "0.1.0"
