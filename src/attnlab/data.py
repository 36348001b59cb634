"""Character-level data for the course: a tokenizer, the Tiny Shakespeare text, batches.

Tiny Shakespeare (about 1.1 MB, 65 distinct characters) is the compilation of Shakespeare's
works from Karpathy's char-rnn repository, shipped as ``data/tinyshakespeare/input.txt``
(see ``data/README.md`` for source and licence). Batches follow teacher forcing: the target
at every position is the next character.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Sequence

import torch
from torch import Tensor

_RELATIVE = Path("data") / "tinyshakespeare" / "input.txt"


class CharTokenizer:
    """Maps each distinct character of a text to an id (sorted order) and back.

    Args:
        text: the text whose characters form the vocabulary (must be non-empty).

    Attributes:
        chars: sorted list of the vocabulary's characters; ``vocab_size`` = ``len(chars)``.
        stoi / itos: dicts char -> id and id -> char.

    Raises:
        ValueError: if ``text`` is empty. TypeError: if it is not a ``str``.
    """

    def __init__(self, text: str) -> None:
        if not isinstance(text, str):
            raise TypeError(f"CharTokenizer needs a str to build its vocabulary from, got {type(text).__name__}.")
        if not text:
            raise ValueError("CharTokenizer needs a non-empty text to build its vocabulary from.")
        self.chars = sorted(set(text))
        self.stoi = {ch: i for i, ch in enumerate(self.chars)}
        self.itos = dict(enumerate(self.chars))

    @property
    def vocab_size(self) -> int:
        """Number of distinct characters V of the text the tokenizer was built from; ids are ``0 .. V - 1``."""
        return len(self.chars)

    def encode(self, s: str) -> list[int]:
        """``str -> list[int]``. Raises ``ValueError`` naming any characters not in the vocabulary."""
        try:
            return [self.stoi[ch] for ch in s]
        except KeyError:
            unknown = sorted({ch for ch in s if ch not in self.stoi})
            raise ValueError(
                f"cannot encode characters not in the vocabulary: {unknown!r}. Build the tokenizer from "
                f"a text that contains them, or remove them (vocabulary has {self.vocab_size} characters)."
            ) from None

    def decode(self, ids: Iterable[int] | Tensor) -> str:
        """Ids -> text: a ``list[int]`` or an ``(L,)`` integer tensor of ids in ``0 .. vocab_size - 1`` -> ``str``.

        Raises:
            ValueError: if a tensor is not 1-D (decode a ``(B, L)`` batch row by row) or an id is unknown.
        """
        if isinstance(ids, Tensor):
            if ids.dim() != 1:
                raise ValueError(f"decode expects a 1-D sequence of ids, got shape {tuple(ids.shape)}; decode rows one by one.")
            ids = ids.tolist()
        try:
            return "".join(self.itos[int(i)] for i in ids)
        except KeyError as e:
            raise ValueError(f"id {e.args[0]} is not in 0..{self.vocab_size - 1}.") from None

    def __repr__(self) -> str:
        return f"CharTokenizer(vocab_size={self.vocab_size})"


def shakespeare_path() -> Path:
    """Where the Tiny Shakespeare text is looked for.

    ``$ATTNLAB_DATA/tinyshakespeare/input.txt`` if the environment variable is set; else
    ``data/tinyshakespeare/input.txt`` in the repository that contains this package (a clone or an
    editable install); else the copy a non-editable install ships as package data (``attnlab/_data``).
    """
    from attnlab.settings import course_settings
    env = course_settings().data
    if env:
        return Path(env) / "tinyshakespeare" / "input.txt"
    repo = Path(__file__).resolve().parents[2] / _RELATIVE  # src/attnlab/data.py -> repo root
    installed = Path(__file__).resolve().parent / "_data" / _RELATIVE.relative_to("data")
    return installed if installed.is_file() and not repo.is_file() else repo


def load_shakespeare() -> str:
    """The Tiny Shakespeare text (str, ~1.1M characters).

    Raises:
        FileNotFoundError: if the file is missing, naming where it was looked for.
    """
    path = shakespeare_path()
    if not path.is_file():
        raise FileNotFoundError(
            f"Tiny Shakespeare not found at {path}. It ships with the course repository as "
            f"{_RELATIVE} (a non-editable install ships it as attnlab/_data); reinstall attnlab or set "
            f"ATTNLAB_DATA to the folder containing tinyshakespeare/input.txt."
        )
    return path.read_text(encoding="utf-8")


def train_val_split(data: Sequence | Tensor, frac: float = 0.9):
    """First ``frac`` of ``data`` for training, the rest for validation (no shuffling:
    contiguous text keeps the validation set honest).

    Returns:
        ``(train, val)``, slices of the same type as ``data``.

    Raises:
        ValueError: if ``frac`` is not in (0, 1).
    """
    if not 0.0 < frac < 1.0:
        raise ValueError(f"frac must be in (0, 1), got {frac}.")
    n = int(len(data) * frac)
    return data[:n], data[n:]


def get_batch(data: Tensor, block_size: int, batch_size: int, generator: torch.Generator | None = None,
              device: torch.device | str | None = None) -> tuple[Tensor, Tensor]:
    """Random training windows for teacher forcing.

    Args:
        data: ``(N,)`` integer tensor of token ids (e.g. ``torch.tensor(tok.encode(text))``).
        block_size: window length L. batch_size: number of windows B.
        generator: ``torch.Generator`` for reproducible windows.
        device: where to put the batch.

    Returns:
        ``x, y``: ``(B, L)`` long each, with ``y[:, t] == x[:, t + 1]`` -- y is x shifted by one,
        so position t is trained to predict token t + 1.

    Raises:
        ValueError: if ``data`` is not 1-D or has no more than ``block_size`` tokens.
        TypeError: if ``data`` is not an integer tensor.
    """
    if not isinstance(data, Tensor):
        raise TypeError(f"data must be a 1-D integer tensor, got {type(data).__name__}; use torch.tensor(ids).")
    if data.dim() != 1:
        raise ValueError(f"data must be 1-D (N,), got shape {tuple(data.shape)}.")
    if data.dtype.is_floating_point or data.dtype == torch.bool:
        raise TypeError(f"data must hold integer token ids, got dtype {data.dtype}.")
    if len(data) <= block_size:
        raise ValueError(f"data has {len(data)} tokens; need more than block_size={block_size} to form (x, y).")
    starts = torch.randint(len(data) - block_size, (batch_size,), generator=generator)  # (B,)
    # every window of L + 1 tokens as a view (no copy), then the B chosen ones copied out: one
    # row gather, several times faster than indexing with a (B, L) grid of positions
    windows = data.unfold(0, block_size + 1, 1).index_select(0, starts)  # (B, L + 1)
    x = windows[:, :-1].long().contiguous()  # (B, L)
    y = windows[:, 1:].long().contiguous()  # (B, L), shifted by one
    return x.to(device), y.to(device)
