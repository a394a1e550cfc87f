"""WikiText data for the language-modelling experiment (Appendix B.2): local
files only, a GPT-2-style byte-level BPE tokenizer, and packing into
fixed-length blocks.

Nothing is fetched at run time. ``data_dir`` holds one of

* raw or tokenised WikiText files: ``wiki.{train,valid,test}.{tokens,raw}``
  (the official archives), or ``{train,valid,test}.{txt,tokens,raw}``;
* a Hugging Face ``datasets`` folder written by ``save_to_disk`` (splits
  ``train``/``validation``/``test`` with a ``text`` column), read only when
  ``datasets`` is importable.

Splits ``"auto"``: train on ``train`` and validate on ``valid`` when a training
split exists; otherwise (the WikiText-2 folder shipped with this project has
only ``valid.txt`` and ``test.txt``) train on ``valid`` and validate on
``test``. The resolved split names are recorded in every result.

Tokenizer: with ``tokenizer_path`` (a folder with GPT-2's ``vocab.json`` and
``merges.txt``, or a ``tokenizer.json``) that tokenizer is used; otherwise a
byte-level BPE of ``vocab_size`` tokens is trained with ``tokenizers`` on the
training split and cached under ``cache_dir``. Token ids are cached too.

Packing: the token stream of a split (the file's text, lines kept as they are)
is cut into consecutive non-overlapping blocks of ``block_size`` tokens; the
last partial block is dropped. Each block predicts its own tokens 2..T from
1..T-1 (no token crosses a block boundary).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np
import torch

SPLITS: tuple[str, ...] = ("train", "valid", "test")
_FILE_NAMES: dict[str, tuple[str, ...]] = {
    split: (
        f"wiki.{split}.tokens",
        f"wiki.{split}.raw",
        f"{split}.txt",
        f"{split}.tokens",
        f"{split}.raw",
    )
    for split in SPLITS
}
_FILE_NAMES["valid"] += ("validation.txt",)
_HF_SPLITS = {"train": "train", "valid": "validation", "test": "test"}
END_OF_TEXT = "<|endoftext|>"


DATA_ENV = "SLTCHECK_WIKITEXT_DIR"
# Looked for relative to the working directory (a checkout's root, as in CI), never to where
# sltcheck is installed: from site-packages that would be the virtualenv's lib/.
DATA_CANDIDATES = (Path("shared") / "data" / "wikitext-2", Path("..") / "shared" / "data" / "wikitext-2")
HOW_TO_GET_DATA = (
    "give --data DIR or set SLTCHECK_WIKITEXT_DIR to a folder with WikiText-2 (wiki.train.tokens / "
    "train.txt, valid.txt, test.txt; e.g. pytorch/examples' word_language_model/data/wikitext-2, or "
    "datasets.load_dataset('wikitext', 'wikitext-2-raw-v1').save_to_disk(DIR))"
)


def default_data_dir() -> Path:
    """``$SLTCHECK_WIKITEXT_DIR``, else the first of :data:`DATA_CANDIDATES` (relative to the
    working directory) that exists, else the last of them (which then does not exist)."""
    env = os.environ.get(DATA_ENV)
    if env:
        return Path(env)
    return next((path for path in DATA_CANDIDATES if path.is_dir()), DATA_CANDIDATES[-1])


def find_data_dir(explicit: str | Path | None = None) -> Path:
    """The WikiText folder: ``explicit`` (``--data``), else ``$SLTCHECK_WIKITEXT_DIR``, else a
    ``shared/data/wikitext-2`` beside or above the working directory; a
    :class:`~sltcheck.errors.UsageError` saying how to get the data when there is none."""
    from sltcheck.errors import UsageError

    if explicit is not None:
        if not Path(explicit).is_dir():
            raise UsageError(f"data_dir must be an existing directory, got --data {str(explicit)!r}; {HOW_TO_GET_DATA}")
        return Path(explicit)
    env = os.environ.get(DATA_ENV)
    if env:
        if not Path(env).is_dir():
            raise UsageError(f"data_dir must be an existing directory, got {DATA_ENV}={env!r}; {HOW_TO_GET_DATA}")
        return Path(env)
    found = default_data_dir()
    if not found.is_dir():
        raise UsageError(f"no WikiText data found (no --data, no {DATA_ENV}, no shared/data/wikitext-2 here or "
                         f"in the parent directory); {HOW_TO_GET_DATA}")
    return found


def _is_hf_dataset_dir(path: Path) -> bool:
    return (path / "dataset_dict.json").is_file()


def available_splits(data_dir: str | Path) -> dict[str, Path | str]:
    """Split name -> text file (or ``"hf:<name>"`` for a ``datasets`` folder)."""
    path = Path(data_dir)
    if not path.is_dir():
        raise ValueError(
            f"data_dir must be an existing directory with WikiText files "
            f"(wiki.train.tokens / train.txt / valid.txt ...), got {str(data_dir)!r}"
        )
    if _is_hf_dataset_dir(path):
        names = json.loads((path / "dataset_dict.json").read_text()).get("splits", [])
        return {s: f"hf:{hf}" for s, hf in _HF_SPLITS.items() if hf in names}
    found: dict[str, Path | str] = {}
    for split, names in _FILE_NAMES.items():
        for name in names:
            if (path / name).is_file():
                found[split] = path / name
                break
    if not found:
        raise ValueError(
            f"data_dir must contain WikiText split files (one of "
            f"{', '.join(_FILE_NAMES['valid'])} ...), got {str(data_dir)!r} with none of them"
        )
    return found


def resolve_splits(
    found: dict[str, Path | str], train_split: str = "auto", val_split: str = "auto"
) -> tuple[str, str]:
    """The (train, validation) split names; ``"auto"`` as in the module doc."""
    for arg, value in (("train_split", train_split), ("val_split", val_split)):
        if value != "auto" and value not in found:
            raise ValueError(
                f"{arg} must be 'auto' or an available split ({', '.join(found)}), got {value!r}"
            )
    if train_split == "auto":
        train_split = "train" if "train" in found else "valid"
    if val_split == "auto":
        val_split = "valid" if train_split == "train" else "test"
    for arg, value in (("train_split", train_split), ("val_split", val_split)):
        if value not in found:
            raise ValueError(
                f"{arg} resolved to {value!r}, which data_dir lacks (available: {', '.join(found)})"
            )
    if train_split == val_split:
        raise ValueError(
            f"val_split must differ from train_split, got both {train_split!r}"
        )
    return train_split, val_split


def read_split_text(data_dir: str | Path, source: Path | str) -> str:
    if isinstance(source, str) and source.startswith("hf:"):
        try:
            import datasets
        except ImportError:  # pragma: no cover - depends on the environment
            raise ValueError(
                f"data_dir {str(data_dir)!r} is a Hugging Face datasets folder; "
                "install `datasets` to read it, or pass a folder of text files"
            ) from None
        ds = datasets.load_from_disk(str(data_dir))[source[3:]]
        return "\n".join(ds["text"])
    return Path(source).read_text(encoding="utf-8")


def _sha1(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


def load_tokenizer(
    tokenizer_path: str | Path | None,
    train_text: str,
    vocab_size: int,
    cache_dir: str | Path,
):
    """A ``tokenizers.Tokenizer`` (see module doc); trained BPEs are cached by content."""
    from tokenizers import Tokenizer
    from tokenizers.implementations import ByteLevelBPETokenizer

    if tokenizer_path is not None:
        path = Path(tokenizer_path)
        if (path / "tokenizer.json").is_file():
            return Tokenizer.from_file(str(path / "tokenizer.json"))
        if (path / "vocab.json").is_file() and (path / "merges.txt").is_file():
            bpe = ByteLevelBPETokenizer(str(path / "vocab.json"), str(path / "merges.txt"))
            return bpe._tokenizer
        raise ValueError(
            f"tokenizer_path must be a folder with vocab.json and merges.txt (GPT-2 BPE) "
            f"or tokenizer.json, got {str(tokenizer_path)!r}"
        )
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int) or vocab_size < 257:
        raise ValueError(f"vocab_size must be an integer >= 257 (bytes + 1), got {vocab_size!r}")
    key = _sha1(train_text.encode("utf-8"))[:16]
    cache = Path(cache_dir) / "tokenizers" / f"bpe-{vocab_size}-{key}.json"
    if cache.is_file():
        return Tokenizer.from_file(str(cache))
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        iter(_chunks(train_text)), vocab_size=vocab_size, min_frequency=2,
        special_tokens=[END_OF_TEXT], show_progress=False,
    )
    cache.parent.mkdir(parents=True, exist_ok=True)
    tmp = cache.with_suffix(f".tmp{os.getpid()}")
    bpe.save(str(tmp))
    os.replace(tmp, cache)
    return Tokenizer.from_file(str(cache))


def _chunks(text: str, size: int = 1 << 20) -> list[str]:
    """The text cut at line ends into pieces of about ``size`` characters."""
    pieces, start = [], 0
    while start < len(text):
        end = text.find("\n", start + size)
        end = len(text) if end < 0 else end + 1
        pieces.append(text[start:end])
        start = end
    return pieces


def encode(tokenizer, text: str, cache_dir: str | Path | None = None) -> np.ndarray:
    """Token ids of ``text`` (cached as ``.npy`` keyed by text and tokenizer)."""
    cache = None
    if cache_dir is not None:
        key = _sha1(text.encode("utf-8") + tokenizer.to_str().encode("utf-8"))[:20]
        cache = Path(cache_dir) / "tokens" / f"{key}.npy"
        if cache.is_file():
            return np.load(cache)
    ids: list[int] = []
    for chunk in _chunks(text):
        # encode line by line: byte-level BPE pre-tokenisation never merges across lines
        for enc in tokenizer.encode_batch(chunk.splitlines(keepends=True)):
            ids.extend(enc.ids)
    dtype = np.uint16 if tokenizer.get_vocab_size() <= 65535 else np.int32
    array = np.asarray(ids, dtype=dtype)
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_name(f"{cache.stem}.tmp{os.getpid()}.npy")
        np.save(tmp, array)
        os.replace(tmp, cache)
    return array


def pack_blocks(ids: np.ndarray, block_size: int) -> torch.Tensor:
    """(n_blocks, block_size) int64 tensor of consecutive tokens; remainder dropped."""
    n_blocks = len(ids) // block_size
    if n_blocks == 0:
        raise ValueError(
            f"block_size must be at most the split length ({len(ids)} tokens), got {block_size}"
        )
    return torch.from_numpy(ids[: n_blocks * block_size].astype(np.int64)).view(
        n_blocks, block_size
    )


@dataclass
class LMData:
    """Packed training and validation blocks plus their provenance."""

    train: torch.Tensor
    val: torch.Tensor
    vocab_size: int
    info: dict


def load_wikitext(
    data_dir: str | Path,
    block_size: int,
    *,
    vocab_size: int = 2048,
    tokenizer_path: str | Path | None = None,
    cache_dir: str | Path = ".sltcheck-cache",
    train_split: str = "auto",
    val_split: str = "auto",
) -> LMData:
    """Read, tokenise (cached) and pack the two splits (see module doc)."""
    found = available_splits(data_dir)
    train_name, val_name = resolve_splits(found, train_split, val_split)
    train_text = read_split_text(data_dir, found[train_name])
    val_text = read_split_text(data_dir, found[val_name])
    tokenizer = load_tokenizer(tokenizer_path, train_text, vocab_size, cache_dir)
    train_ids = encode(tokenizer, train_text, cache_dir)
    val_ids = encode(tokenizer, val_text, cache_dir)
    info = {
        "data_dir": str(Path(data_dir).resolve()),
        "train_split": train_name,
        "val_split": val_name,
        "train_source": str(found[train_name]),
        "val_source": str(found[val_name]),
        "tokenizer": str(tokenizer_path) if tokenizer_path else f"byte-level BPE {vocab_size}",
        "vocab_size": tokenizer.get_vocab_size(),
        "train_tokens": len(train_ids),
        "val_tokens": len(val_ids),
        "block_size": block_size,
    }
    return LMData(
        pack_blocks(train_ids, block_size),
        pack_blocks(val_ids, block_size),
        tokenizer.get_vocab_size(),
        info,
    )


class BatchStream:
    """Deterministic batches: batch ``i`` depends only on (seed, i).

    Blocks are visited in a fresh random order on every pass over the training
    set (pass ``p`` uses ``torch.Generator().manual_seed(seed * 1_000_003 + p)``);
    batch ``i`` takes entries ``i*B .. i*B+B-1`` of that endless sequence. The
    data position saved in a checkpoint is therefore just the step number.
    """

    def __init__(self, blocks: torch.Tensor, batch_size: int, seed: int) -> None:
        self.blocks = blocks
        self.batch_size = batch_size
        self.seed = seed
        self._perms: dict[int, torch.Tensor] = {}

    def _perm(self, p: int) -> torch.Tensor:
        if p not in self._perms:
            g = torch.Generator().manual_seed(self.seed * 1_000_003 + p)
            self._perms = {p: torch.randperm(len(self.blocks), generator=g)}
        return self._perms[p]

    def batch(self, index: int) -> torch.Tensor:
        n = len(self.blocks)
        rows = []
        for i in range(index * self.batch_size, (index + 1) * self.batch_size):
            rows.append(int(self._perm(i // n)[i % n]))
        return self.blocks[rows]


def validation_subset(blocks: torch.Tensor, max_blocks: int | None) -> torch.Tensor:
    """At most ``max_blocks`` evenly spaced blocks (all when ``None``)."""
    if max_blocks is None or max_blocks >= len(blocks):
        return blocks
    index = torch.linspace(0, len(blocks) - 1, max_blocks).round().long()
    return blocks[index]


def synthetic_text(n_words: int = 40_000, seed: int = 0) -> str:
    """Word salad with Zipf-like frequencies and simple bigram structure, for tests."""
    rng = np.random.default_rng(seed)
    vocab = [
        "the", "of", "and", "in", "a", "to", "was", "is", "for", "on", "as", "with", "by",
        "he", "at", "from", "his", "an", "were", "which", "it", "that", "album", "song",
        "game", "season", "river", "city", "band", "first", "new", "after", "during", "film",
    ]
    weights = 1.0 / np.arange(1, len(vocab) + 1)
    words = rng.choice(vocab, size=n_words, p=weights / weights.sum())
    lines, line = [], []
    for i, word in enumerate(words):
        line.append(str(word))
        if word == "the":
            line.append(str(vocab[(i % 7) + 20]))
        if len(line) > 60:
            lines.append(" " + " ".join(line) + " . \n")
            line = []
    return " = Synthetic = \n" + "".join(lines)
