"""Which folders a check may read under the ``landlock`` mechanism (``confine._landlock_paths``)."""
from __future__ import annotations

from attnlab_grader.sandbox.confine import _landlock_paths


def _paths(allowed, hidden):
    return sorted(_landlock_paths(allowed, hidden))


def test_hidden_folders_are_carved_out_and_a_kept_venv_inside_the_repository_stays(tmp_path):
    repo, other = tmp_path / "repo", tmp_path / "usr"
    for d in (repo / ".venv" / "lib", repo / "solutions", repo / "src" / "attnlab", other / "share" / "doc",
              other / "share" / "docs-not-hidden", other / "lib"):
        d.mkdir(parents=True)
    (other / "share" / "link-into-repo").symlink_to(repo / "solutions")
    got = _paths([str(other), str(repo / ".venv")], [str(repo), str(other / "share" / "doc")])
    assert got == sorted([str(repo / ".venv"), str(other / "lib"), str(other / "share" / "docs-not-hidden")])
    # nothing hidden inside: the folder itself is the rule
    assert _paths([str(other / "lib")], [str(repo)]) == [str(other / "lib")]
