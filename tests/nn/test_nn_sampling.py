"""Temperature, top-k and top-p filters."""

import pytest
import torch

from attnlab.nn import top_k_filter, top_p_filter
from attnlab.nn.sampling import apply_temperature, sample_next_token

NEG = float("-inf")


def test_top_k_keeps_k_largest():
    logits = torch.tensor([[1.0, 4.0, 2.0, 3.0]])
    assert torch.equal(top_k_filter(logits, 2), torch.tensor([[NEG, 4.0, NEG, 3.0]]))
    assert torch.equal(top_k_filter(logits, 10), logits)  # k >= V keeps all


def test_top_p_keeps_smallest_nucleus():
    probs = torch.tensor([0.5, 0.3, 0.15, 0.05])
    logits = probs.log()
    kept = lambda p: torch.isfinite(top_p_filter(logits, p)).tolist()  # noqa: E731
    assert kept(0.5) == [True, False, False, False]
    assert kept(0.6) == [True, True, False, False]
    assert kept(0.9) == [True, True, True, False]
    assert kept(1.0) == [True, True, True, True]
    assert kept(0.01) == [True, False, False, False]  # the top token always survives


def test_top_p_on_unsorted_batched_logits():
    logits = torch.tensor([[0.0, 3.0, 1.0], [2.0, 0.0, 5.0]])
    # row 1 probabilities ≈ [0.04, 0.84, 0.11]; row 2 ≈ [0.05, 0.01, 0.95]
    out = top_p_filter(logits, 0.9)
    assert torch.isfinite(out).tolist() == [[False, True, True], [False, False, True]]


def test_temperature_and_errors():
    logits = torch.tensor([1.0, 2.0])
    torch.testing.assert_close(apply_temperature(logits, 0.5), torch.tensor([2.0, 4.0]))
    with pytest.raises(ValueError, match="temperature must be > 0, got 0"):
        apply_temperature(logits, 0)
    with pytest.raises(ValueError, match="top_k must be an int >= 1, got 0"):
        top_k_filter(logits, 0)
    with pytest.raises(ValueError, match=r"top_p must be in \(0, 1\], got 1.5"):
        top_p_filter(logits, 1.5)


def test_sample_next_token_respects_filters():
    logits = torch.tensor([[0.0, 0.1, 5.0, 0.2]]).repeat(200, 1)
    g = torch.Generator().manual_seed(0)
    assert torch.all(sample_next_token(logits, top_k=1, generator=g) == 2)
    draws = sample_next_token(logits, temperature=100.0, top_k=2, generator=g)
    assert set(draws.tolist()) == {2, 3}
    assert torch.equal(sample_next_token(logits[:1], greedy=True), torch.tensor([2]))
