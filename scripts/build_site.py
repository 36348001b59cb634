"""Build the course website (``make site``) and, with ``--serve``, serve it on localhost (``./start.sh --site``).

The build is Sphinx's, strict: ``-W`` (a warning fails it: a broken cross-reference, a missing image, a
notebook cell's error) and ``-n`` (nitpicky: every reference must resolve). It is incremental: Sphinx reads
again only the pages whose sources changed, and jupyter-cache executes again only the lessons whose source
changed (site/conf.py). The wall time is printed.

    python scripts/build_site.py                    # site/_build/html
    python scripts/build_site.py --serve [--port N] # build if needed, then serve on 127.0.0.1 (Ctrl-C stops)
    python scripts/build_site.py --source DIR --out DIR   # another source folder with the site's conf.py
    python scripts/build_site.py --fresh            # forget every executed lesson and page first

The execution cache keys on a lesson's own text: after a change to the library the lessons call
(``src/attnlab``), build with ``--fresh`` (``make site-fresh``) so that the lessons run on the new code.

Exit status: Sphinx's (non-zero when the build failed), or 2 for a wrong argument.
"""
from __future__ import annotations

import argparse
import functools
import http.server
import shutil
import socket
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "site"
OUT = SITE / "_build" / "html"
#: the strict flags: warnings are errors, every reference must resolve, all warnings are shown before failing
STRICT = ("-W", "-n", "--keep-going")


def sphinx_command(source: Path = SITE, out: Path = OUT, *extra: str) -> list[str]:
    """The ``sphinx-build`` command line of the site (the conf.py is always ``site/conf.py``; Sphinx's
    doctrees go next to ``out``, not into the published folder)."""
    return [sys.executable, "-m", "sphinx", "-b", "html", *STRICT, "-q", "-c", str(SITE),
            "-d", str(out.parent / "doctrees"), *extra, str(source), str(out)]


def kernel_env() -> dict[str, str]:
    """The environment of the build and so of the lesson kernels it starts: short training runs (as the test
    suite runs them), a throwaway learner store so a build never reads or writes anyone's progress, and
    matplotlib's inline backend (figures become outputs)."""
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    env.setdefault("ATTNLAB_CI", "1")
    env.setdefault("ATTNLAB_HOME", str(SITE / "_build" / "attnlab-home"))
    return env


def build(source: Path = SITE, out: Path = OUT, *extra: str) -> int:
    """Run the strict build; print its wall time. Returns Sphinx's exit status."""
    start = time.perf_counter()
    rc = subprocess.call(sphinx_command(source, out, *extra), cwd=ROOT, env=kernel_env())
    seconds = time.perf_counter() - start
    if rc == 0:
        print(f"site: built {out / 'index.html'} in {seconds:.0f} s")
    else:
        print(f"site: the build failed after {seconds:.0f} s (the messages above say where)", file=sys.stderr)
    return rc


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def serve(out: Path = OUT, port: int = 0) -> None:
    """Serve ``out`` on 127.0.0.1:``port`` (0: a free port) until interrupted; prints the address."""
    port = port or free_port()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(out))
    with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as httpd:
        print(f"site: serving the course website at http://127.0.0.1:{port}/ (Ctrl-C stops)", flush=True)
        try:
            httpd.serve_forever()
        except KeyboardInterrupt:
            print("site: stopped")


def main(argv: list[str] | None = None) -> int:
    """Command line (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, default=SITE, help="the source folder (default: site/)")
    parser.add_argument("--out", type=Path, default=OUT, help="the output folder (default: site/_build/html)")
    parser.add_argument("--serve", action="store_true", help="serve the built site on 127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="port for --serve (default: a free one)")
    parser.add_argument("--fresh", action="store_true",
                        help="remove the previous build and the execution cache first (every lesson runs again)")
    args = parser.parse_args(argv)
    if not (args.source / "index.md").is_file():
        parser.error(f"{args.source} holds no index.md; give the site's source folder with --source")
    if args.fresh:
        shutil.rmtree(SITE / "_build", ignore_errors=True)
        shutil.rmtree(args.out, ignore_errors=True)
    rc = build(args.source.resolve(), args.out.resolve())
    if rc != 0 or not args.serve:
        return rc
    serve(args.out.resolve(), args.port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
