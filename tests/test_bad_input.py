"""Every bad input raises a ValueError naming the argument, the value and what is allowed."""

from __future__ import annotations

import numpy as np
import pytest

from sltcheck.assumptions import require, violations
from sltcheck.model import reference
from sltcheck.model.weights import FCWeights, MHAMasks, MHAWeights
from sltcheck.numerics.precision import to_mp
from sltcheck.numerics.verdict import decide

RNG = np.random.default_rng(0)
W = MHAWeights(*(RNG.normal(size=s) for s in [(2, 3, 4), (2, 3, 4), (2, 3, 5), (2, 5, 3)]))
X = RNG.normal(size=(4, 3))
CAUSAL = np.tril(np.ones((4, 4)))


def nan_at(array, index):
    array = np.array(array, dtype=float)
    array[index] = np.nan
    return array


def inf_at(array, index):
    array = np.array(array, dtype=float)
    array[index] = np.inf
    return array


def zero_row(mask, row):
    mask = np.array(mask)
    mask[row] = 0
    return mask


# (case, callable, fragment the message must contain)
CASES = [
    ("X wrong width", lambda: reference.mha(RNG.normal(size=(4, 2)), CAUSAL, W), "X must have 3 features"),
    ("X wrong rank", lambda: reference.mha(RNG.normal(size=(4,)), CAUSAL, W), "X must have 2 dimensions"),
    ("X empty", lambda: reference.mha(np.zeros((0, 3)), np.zeros((0, 0)), W), "T >= 1"),
    ("X with NaN", lambda: reference.mha(nan_at(X, (1, 2)), CAUSAL, W), "X must have finite entries"),
    ("X with inf", lambda: reference.mha(inf_at(X, (0, 0)), CAUSAL, W), "X must have finite entries"),
    ("mask wrong shape", lambda: reference.mha(X, np.ones((3, 4)), W), "mask must have shape (4, 4)"),
    ("mask row of zeros", lambda: reference.mha(X, zero_row(CAUSAL, 2), W), "mask row 2 attends to no token"),
    ("mask not binary", lambda: reference.mha(X, CAUSAL * 0.5, W), "mask must be binary"),
    ("softmax mask row of zeros", lambda: reference.masked_softmax(np.zeros((2, 3)), np.array([[1, 0, 0], [0, 0, 0]])),
     "mask row 1 attends to no token"),
    ("weights with NaN", lambda: MHAWeights(nan_at(W.W_Q, (0, 0, 0)), W.W_K, W.W_V, W.W_O), "W_Q must have finite"),
    ("weights shape mismatch", lambda: MHAWeights(W.W_Q, W.W_K[:, :, :3], W.W_V, W.W_O), "W_K must have shape"),
    ("W_O shape mismatch", lambda: MHAWeights(W.W_Q, W.W_K, W.W_V, W.W_O[:, :4]), "W_O must have shape"),
    ("non-binary pruning mask", lambda: MHAMasks(*(np.full(w.shape, 2) for w in W.tensors())), "M_Q must be binary"),
    ("pruning mask wrong shape", lambda: W.pruned(MHAMasks(*(np.ones((1, 1, 1)) for _ in range(4)))),
     "masks.M_Q must have the weight's shape"),
    ("FC layers do not chain", lambda: FCWeights((np.ones((4, 3)), np.ones((2, 5)))), "layers[1] must have 4 columns"),
    ("FC no layers", lambda: FCWeights(()), "at least one weight matrix"),
    ("precision zero", lambda: reference.mha(X, CAUSAL, W, dps=0), "positive integer"),
    ("precision negative", lambda: to_mp(X, -5), "positive integer"),
    ("precision not an int", lambda: reference.mha(X, CAUSAL, W, dps=2.5), "positive integer"),
    ("verdict precision", lambda: decide(1, 2, dps=0), "positive integer"),
    ("unknown statement", lambda: violations("lemma99", {}), "statement must be one of"),
    ("unknown assumption", lambda: violations("lemma8", {}, skip=["nonsense"]), "skip must name assumptions"),
    ("violated assumption", lambda: require("lemma8", {"eps_max": -1.0}), "eps_max = -1"),
]


@pytest.mark.parametrize("call, fragment", [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_bad_input_raises_a_clear_value_error(call, fragment):
    with pytest.raises(ValueError) as error:
        call()
    assert fragment in str(error.value)
