"""What the paper reports for Figures 4-8, as data, each entry with where the paper says it.

The paper-beside-sltcheck page (``sltcheck repro readme``, ``docs/results/paper.md``) prints these beside sltcheck's
numbers. The figures are images that the text in ``shared/paper/`` does not hold, so nothing
here is read off a plot: a quantity that only a plot shows is ``NOT_IN_TEXT``. Each entry cites
the full paper by section (Section 4.2's paragraphs by their titles) or appendix, or the workshop
version where named, so a reader with the paper can follow it.
"""

from __future__ import annotations

from dataclasses import dataclass

from sltcheck.repro.fits import PAPER_FIT, WORKSHOP_FIT

NOT_IN_TEXT = "plot only, not in the text"  # shared/paper/ holds the text, no plot


@dataclass(frozen=True)
class Reported:
    """One thing the paper reports: its words (a number, a setting or a claim) and where."""

    text: str
    source: str

    def cell(self) -> str:
        return f"{self.text} ({self.source})"


def _not_in_text(figure: int) -> Reported:
    return Reported(NOT_IN_TEXT, f"Figure {figure}")


B1 = "Appendix B.1"  # the synthetic experiments
B2 = "Appendix B.2"  # the language models
HIDDEN = 'Section 4.2, "Varying the Hidden Dimensions"'
LENGTH = 'Section 4.2, "Varying the Sequence Length"'
BLOCKS = 'Section 4.2, "Varying the Number of Blocks"'
PRACTICAL = "Section 4.3"
SYNTHETIC_COMMON: dict[str, Reported] = {
    "sources": Reported("100 random sources per point", B1),
    "solver": Reported("Gurobi (mixed-integer program)", B1),
    "source_init": Reported("Xavier uniform (Section 4.1 says U[-n_K^(-1/4), n_K^(-1/4)] "
                            "and U[-1, 1] instead)", B1),
}

PAPER: dict[str, dict[str, Reported]] = {
    "fig4": {
        **SYNTHETIC_COMMON,
        "setting": Reported("one single-head MHA, input 2, output 1, target d_K = 8, T = 4", B1),
        "target": Reported("trained 25 epochs (AdamW, lr 0.1, weight decay 0.01, batch 1024), "
                           "norms as trained", B1),
        "widths": _not_in_text(4),
        "gamma": Reported(f"{PAPER_FIT['gamma']} (workshop version: {WORKSHOP_FIT['gamma']})",
                          f"{HIDDEN}; workshop version, Section 4"),
        "delta": Reported(f"{PAPER_FIT['delta']} (workshop version: {WORKSHOP_FIT['delta']})",
                          f"{HIDDEN}; workshop version, Section 4"),
        "errors": _not_in_text(4),
    },
    "fig5": {
        **SYNTHETIC_COMMON,
        "setting": Reported("one single-head MHA, T varied (training lengths 4 to 256)", B1),
        "target": Reported("trained 25 epochs (AdamW, lr 0.1, weight decay 0.01, batch 1024)", B1),
        "widths": _not_in_text(5),
        "fits": Reported("none reported for Figure 5", LENGTH),
        "errors": _not_in_text(5),
        "claim": Reported("\"even as T increases, the error remains bounded, and the bound decreases with "
                          "larger hidden dimensions\"", LENGTH),
    },
    "fig6": {
        **SYNTHETIC_COMMON,
        "setting": Reported("transformers of B single-head blocks, input and output 2, target d_K = 8, "
                            "n_MHA = n_FC", f"{BLOCKS}; {B1}"),
        "target": Reported("untrained, drawn as the theorems assume (Q, K: U[-n_K^(1/4), n_K^(1/4)]; "
                           "V, O, FC: U[-1, 1])", f"{BLOCKS}; {B1}"),
        "widths": _not_in_text(6),
        "fits": Reported("delta fitted on block 1 and shared, gamma per block; values not in the text",
                         BLOCKS),
        "errors": _not_in_text(6),
        "claim": Reported("\"error accumulates as the number of blocks increases\"; the error decreases "
                          "rapidly with the width for every B", f"Figure 6's caption; {BLOCKS}"),
    },
    "fig7": {
        "setting": Reported("GPT-2 mini (4 layers), small, medium on WikiText-103, context 1024; "
                            "edge-popup keeping 30 %", f"{B2}; Section 4.1"),
        "train": Reported("50 epochs x 227 steps; AdamW, lr 1e-4 cosine to 1e-5, warm-up over the first "
                          "epoch, for every model (the dense ones too); weight decay and batch not stated", B2),
        "seeds": Reported("3 seeds per model size, mean and standard deviation of the best value", B2),
        "losses": _not_in_text(7),
        "claim": Reported("\"SLTs with the weight scaling tend to exhibit lower loss, approaching the "
                          "performance of trained models\"", PRACTICAL),
    },
    "fig8": {
        "setting": Reported("the same GPT-2 models, s in 1..5", f"{PRACTICAL}; Figure 8's caption"),
        "train": Reported("as Figure 7", B2),
        "seeds": Reported("3 seeds per model size", B2),
        "losses": _not_in_text(8),
        "claim": Reported("\"in all models, the lowest loss is consistently achieved around\" s = n_K^(1/4) "
                          "~ 2.8", PRACTICAL),
    },
}
