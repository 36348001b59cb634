"""attnlab.data: CharTokenizer, load_shakespeare, train_val_split, get_batch."""

import pytest
import torch

from attnlab import data as D


def test_tokenizer_roundtrip_and_sorted_vocab():
    tok = D.CharTokenizer("hello world")
    assert tok.chars == sorted(set("hello world")) and tok.vocab_size == 8
    ids = tok.encode("low")
    assert ids == [tok.stoi["l"], tok.stoi["o"], tok.stoi["w"]]
    assert tok.decode(ids) == "low"
    assert tok.decode(torch.tensor(ids)) == "low"


def test_tokenizer_errors_name_the_problem():
    tok = D.CharTokenizer("abc")
    with pytest.raises(ValueError, match=r"not in the vocabulary: \['x', 'z'\]"):
        tok.encode("axbz")
    with pytest.raises(ValueError, match=r"id 7 is not in 0\.\.2"):
        tok.decode([0, 7])
    with pytest.raises(ValueError, match="non-empty"):
        D.CharTokenizer("")


def test_load_shakespeare():
    text = D.load_shakespeare()
    assert text.startswith("First Citizen:") and len(text) == 1_115_394
    assert D.CharTokenizer(text).vocab_size == 65


def test_load_shakespeare_missing_file_message(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNLAB_DATA", str(tmp_path))
    with pytest.raises(FileNotFoundError, match=r"Tiny Shakespeare not found at .*input\.txt.*ATTNLAB_DATA"):
        D.load_shakespeare()


def test_train_val_split():
    data = torch.arange(100)
    train, val = D.train_val_split(data)
    assert torch.equal(train, torch.arange(90)) and torch.equal(val, torch.arange(90, 100))
    assert D.train_val_split("abcdefghij", 0.5) == ("abcde", "fghij")
    with pytest.raises(ValueError, match=r"frac must be in \(0, 1\), got 1.0"):
        D.train_val_split(data, 1.0)


def test_get_batch_is_shifted_by_one_and_reproducible():
    data = torch.arange(50)
    x, y = D.get_batch(data, block_size=8, batch_size=4, generator=torch.Generator().manual_seed(0))
    assert x.shape == y.shape == (4, 8) and x.dtype == torch.long
    assert torch.equal(y[:, :-1], x[:, 1:])  # teacher forcing: y is the next token
    assert torch.equal(y, x + 1)  # data = arange, so the window is contiguous
    x2, _ = D.get_batch(data, 8, 4, generator=torch.Generator().manual_seed(0))
    assert torch.equal(x, x2)


def test_get_batch_errors():
    with pytest.raises(ValueError, match="need more than block_size=8"):
        D.get_batch(torch.arange(8), 8, 2)
    with pytest.raises(TypeError, match="integer token ids"):
        D.get_batch(torch.zeros(20), 8, 2)
    with pytest.raises(ValueError, match=r"1-D \(N,\)"):
        D.get_batch(torch.zeros(2, 20, dtype=torch.long), 8, 2)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8])
def test_get_batch_gathers_the_same_windows_as_indexing_every_position(dtype):
    """get_batch copies whole windows out of an unfold view; the values must be exactly those of
    indexing each position (x[b, t] = data[s_b + t], y[b, t] = data[s_b + t + 1]), as int64."""
    data = torch.randint(0, 60, (500,), generator=torch.Generator().manual_seed(4)).to(dtype)
    for block, batch in ((1, 1), (7, 5), (64, 12)):
        x, y = D.get_batch(data, block, batch, torch.Generator().manual_seed(9))
        starts = torch.randint(len(data) - block, (batch,), generator=torch.Generator().manual_seed(9))
        grid = starts[:, None] + torch.arange(block)[None, :]
        assert x.dtype == y.dtype == torch.int64 and x.is_contiguous() and y.is_contiguous()
        assert torch.equal(x, data[grid].long()) and torch.equal(y, data[grid + 1].long())
    strided = data[::2]  # a non-contiguous 1-D view works too
    x, y = D.get_batch(strided, 5, 3, torch.Generator().manual_seed(1))
    starts = torch.randint(len(strided) - 5, (3,), generator=torch.Generator().manual_seed(1))
    assert torch.equal(x, strided[starts[:, None] + torch.arange(5)].long())
