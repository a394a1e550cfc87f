"""The paper's objects: weights (MHA, FC, block, transformer), the mpmath reference and the torch model."""
