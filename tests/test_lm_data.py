"""WikiText loading, tokenizer training/caching and block packing."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from sltcheck.repro.lm.data import (
    BatchStream,
    available_splits,
    default_data_dir,
    load_wikitext,
    pack_blocks,
    resolve_splits,
    synthetic_text,
    validation_subset,
)


def wikitext_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The WikiText-2 folder when present ($SLTCHECK_WIKITEXT_DIR or ../shared/...),
    else a folder of generated text with the same file names."""
    real = default_data_dir()
    if (real / "valid.txt").is_file():
        return real
    path = tmp_path_factory.mktemp("wikitext")
    (path / "valid.txt").write_text(synthetic_text(40_000, seed=0))
    (path / "test.txt").write_text(synthetic_text(20_000, seed=1))
    return path


def test_default_data_dir_follows_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SLTCHECK_WIKITEXT_DIR", str(tmp_path))
    assert default_data_dir() == tmp_path
    monkeypatch.delenv("SLTCHECK_WIKITEXT_DIR")
    assert default_data_dir().parts[-3:] == ("shared", "data", "wikitext-2")


def test_split_resolution(tmp_path: Path) -> None:
    for name in ("wiki.train.tokens", "wiki.valid.tokens", "wiki.test.tokens"):
        (tmp_path / name).write_text("x\n")
    found = available_splits(tmp_path)
    assert set(found) == {"train", "valid", "test"}
    assert resolve_splits(found) == ("train", "valid")
    assert resolve_splits({"valid": "v", "test": "t"}) == ("valid", "test")
    with pytest.raises(ValueError, match=r"train_split must be 'auto' or an available split"):
        resolve_splits({"valid": "v", "test": "t"}, train_split="train")


def test_missing_data_dir_raises(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(ValueError, match=rf"data_dir must be an existing directory.*{missing}"):
        load_wikitext(missing, 16)
    with pytest.raises(ValueError, match="data_dir must contain WikiText split files"):
        load_wikitext(tmp_path, 16)


def test_load_tokenise_pack_and_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    data_dir = tmp_path_factory.mktemp("gen")
    (data_dir / "train.txt").write_text(synthetic_text(20_000, seed=0))
    (data_dir / "valid.txt").write_text(synthetic_text(5_000, seed=1))
    cache = tmp_path_factory.mktemp("cache")
    data = load_wikitext(data_dir, 32, vocab_size=300, cache_dir=cache)
    assert data.info["train_split"] == "train"
    assert data.info["val_split"] == "valid"
    assert data.vocab_size <= 300
    assert data.train.shape[1] == 32
    assert data.train.dtype == torch.int64
    assert int(data.train.max()) < data.vocab_size
    assert len(list((cache / "tokenizers").glob("*.json"))) == 1
    again = load_wikitext(data_dir, 32, vocab_size=300, cache_dir=cache)
    assert torch.equal(again.train, data.train)
    assert torch.equal(again.val, data.val)


def test_real_or_generated_wikitext_loads(tmp_path_factory: pytest.TempPathFactory) -> None:
    data = load_wikitext(wikitext_dir(tmp_path_factory), 128, vocab_size=512,
                         cache_dir=tmp_path_factory.mktemp("cache"))
    assert (data.info["train_split"], data.info["val_split"]) == ("valid", "test")
    assert len(data.train) > 50
    assert len(data.val) > 20


def test_gpt2_tokenizer_from_local_files(tmp_path: Path) -> None:
    from tokenizers.implementations import ByteLevelBPETokenizer

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator([synthetic_text(3000)], vocab_size=280, show_progress=False)
    bpe.save_model(str(tmp_path))  # vocab.json + merges.txt, GPT-2's file format
    (tmp_path / "train.txt").write_text(synthetic_text(3000, 1))
    (tmp_path / "valid.txt").write_text(synthetic_text(3000, 2))
    data = load_wikitext(tmp_path, 16, tokenizer_path=tmp_path, cache_dir=tmp_path / "c")
    assert data.vocab_size == bpe.get_vocab_size()
    with pytest.raises(ValueError, match=r"tokenizer_path must be a folder with vocab\.json"):
        load_wikitext(tmp_path, 16, tokenizer_path=tmp_path / "c")


def test_pack_and_batches_are_deterministic() -> None:
    blocks = pack_blocks(np.arange(103, dtype=np.uint16), 10)
    assert blocks.shape == (10, 10)
    assert int(blocks[3, 0]) == 30
    stream = BatchStream(blocks, 4, seed=7)
    first = [stream.batch(i) for i in range(6)]  # crosses passes over the 10 blocks
    again = BatchStream(blocks, 4, seed=7)
    assert all(torch.equal(again.batch(i), first[i]) for i in reversed(range(6)))
    seen = torch.cat([*first[:2], first[2][:2]])[:, 0].tolist()
    assert sorted(seen) == list(range(0, 100, 10))  # one pass visits every block once
    assert len(validation_subset(blocks, 3)) == 3
    with pytest.raises(ValueError, match="block_size must be at most"):
        pack_blocks(np.arange(5), 10)

