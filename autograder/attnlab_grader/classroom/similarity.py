"""Pairs of submissions whose code is suspiciously alike, for a person to judge.

For one assignment, each graded submission's answer code (the nbgrader answer cells of
``COURSE/autograded/<student>/<assignment>/``, i.e. the checked copy that was graded) is
fingerprinted with copydetect (tokenised, so renamed variables and changed comments do not
hide a copy; winnowed k-grams, Schleimer, Wilkerson & Aiken, *Winnowing: local algorithms for
document fingerprinting*, SIGMOD 2003), with the released notebook's code as boilerplate (the
stubs and given code everyone shares).  Every pair whose overlap is at least ``threshold`` of
*both* submissions is listed, most alike first, with the shared lines.

This never changes a grade or flags a submission: the list goes to
``COURSE/reports/similarity/<assignment>.json`` and ``.html`` and to the terminal, for
the instructor to look at.  Short or standard answers are alike by nature; the list is where
to start reading, not a verdict.
"""
from __future__ import annotations

import html
import io
import itertools
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

import nbformat

#: copydetect's defaults: k-grams of 25 tokens, every match of 30 or more tokens found.
NOISE_T, GUARANTEE_T = 25, 30
#: A pair is listed when the shared code is at least this fraction of each submission's code.
DEFAULT_THRESHOLD = 0.6


class SimilarityError(ValueError):
    """Nothing to compare (unknown assignment, nothing graded); nothing was written."""


@dataclass(frozen=True)
class Pair:
    """Two students whose answer code overlaps: ``similarity_a`` is the shared fraction of
    ``a``'s code, ``similarity_b`` of ``b``'s; ``shared`` the overlapping code of ``a`` (excerpts)."""
    a: str
    b: str
    similarity_a: float
    similarity_b: float
    shared_tokens: int
    shared: list[str]


def answer_code(path: str | os.PathLike) -> str:
    """The source of the answer code cells (nbgrader ``solution`` cells) of a notebook, joined."""
    nb = nbformat.read(str(path), as_version=4)
    return "\n\n".join(c.source for c in nb.cells if c.cell_type == "code"
                       and c.metadata.get("nbgrader", {}).get("solution"))


def _fingerprint(code: str, boilerplate=None):
    from copydetect import CodeFingerprint
    return CodeFingerprint("answer.py", NOISE_T, GUARANTEE_T - NOISE_T + 1, boilerplate=boilerplate,
                           language="python", fp=io.StringIO(code))


def find_pairs(root: str | os.PathLike, assignment: str, threshold: float = DEFAULT_THRESHOLD) -> list[Pair]:
    """The alike pairs of ``assignment`` in the course at ``root`` (see the module docstring).

    ``threshold``: the similarity (a fraction in (0, 1]) from which a pair is listed.

    Raises:
        SimilarityError: if ``threshold`` is not a fraction between 0 and 1, or the assignment has
            no graded submissions yet.
    """
    from copydetect import compare_files
    if not 0 < threshold <= 1:
        raise SimilarityError("--threshold is a fraction between 0 and 1 (e.g. 0.6)")
    root = Path(root)
    release = root / "release" / assignment / f"{assignment}.ipynb"
    base = root / "autograded"
    subs = sorted(p.parent.parent.name for p in base.glob(f"*/{assignment}/{assignment}.ipynb")) if base.is_dir() else []
    if not subs:
        raise SimilarityError(f"no graded submissions of {assignment} under {base}; grade them first")
    boiler = _fingerprint(answer_code(release)).hashes if release.exists() else []
    prints = {}
    for s in subs:
        try:
            prints[s] = _fingerprint(answer_code(base / s / assignment / f"{assignment}.ipynb"), list(boiler))
        except (OSError, ValueError):
            continue
    pairs = []
    for a, b in itertools.combinations(sorted(prints), 2):
        fa, fb = prints[a], prints[b]
        if not fa.hashes or not fb.hashes:
            continue
        overlap, (sim_a, sim_b), (slices_a, _) = compare_files(fa, fb)
        if min(sim_a, sim_b) >= threshold:
            shared = [fa.raw_code[s:e].strip() for s, e in zip(slices_a[0], slices_a[1], strict=True)][:5] if len(slices_a) else []
            pairs.append(Pair(a, b, round(float(sim_a), 3), round(float(sim_b), 3), int(overlap), shared))
    pairs.sort(key=lambda p: (-min(p.similarity_a, p.similarity_b), p.a, p.b))
    return pairs


def write(root: str | os.PathLike, assignment: str, threshold: float = DEFAULT_THRESHOLD) -> tuple[Path, list[Pair]]:
    """Find the pairs and write ``reports/similarity/<assignment>.{json,html}`` (not in
    ``reports/<assignment>/``, which holds one grade report per student); returns the HTML path."""
    pairs = find_pairs(root, assignment, threshold)
    out = Path(root) / "reports" / "similarity"
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{assignment}.json").write_text(json.dumps({"assignment": assignment, "threshold": threshold,
                                                     "pairs": [asdict(p) for p in pairs]}, indent=1))
    rows = "".join(
        f"<tr><td>{html.escape(p.a)}</td><td>{html.escape(p.b)}</td><td>{p.similarity_a:.0%}</td>"
        f"<td>{p.similarity_b:.0%}</td><td><pre>{html.escape(chr(10).join(p.shared)[:2000])}</pre></td></tr>"
        for p in pairs)
    page = (f"<!doctype html><meta charset='utf-8'><title>Similar submissions: {html.escape(assignment)}</title>"
            f"<h1>Similar submissions: {html.escape(assignment)}</h1>"
            f"<p>Pairs whose answer code overlaps by at least {threshold:.0%} of each (copydetect, tokenised: "
            "renaming does not hide a copy; the released code is ignored). <strong>For a person to judge: "
            "nothing here changes a grade.</strong> Short or standard answers are alike by nature.</p>"
            + (f"<table border=1 cellpadding=4><tr><th>student</th><th>student</th><th>of first</th>"
               f"<th>of second</th><th>shared code (first's)</th></tr>{rows}</table>" if pairs
               else "<p>No pair above the threshold.</p>"))
    (out / f"{assignment}.html").write_text(page, encoding="utf-8")
    return out / f"{assignment}.html", pairs
