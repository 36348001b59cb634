"""The course website as a JupyterHub service: ``/services/course/`` for every logged-in user, no server started.

A small static file server (tornado, which JupyterHub ships) behind the hub's OAuth: a request without the
hub's login goes to the hub's login page; a logged-in user with the scope ``access:services!service=course``
(``jupyterhub_config.py`` gives it to every user) gets the built site (``make site``: ``site/_build/html``,
copied by ``install.sh`` to ``<class>/site``). Nothing is executed and no single-user server is spawned.

Environment (set by JupyterHub for a managed service, plus one of ours):

* ``JUPYTERHUB_SERVICE_PREFIX`` (``/services/course/``), ``JUPYTERHUB_SERVICE_URL`` (where to listen),
  ``JUPYTERHUB_API_TOKEN`` and the OAuth settings: read by :class:`jupyterhub.services.auth.HubOAuth`;
* ``ATTNLAB_SITE_DIR``: the built site (a folder holding ``index.html``).

Source: JupyterHub's documentation, "Services" (hub-managed services, ``HubOAuthenticated``).
"""
from __future__ import annotations

import os
import secrets
import sys
from pathlib import Path
from urllib.parse import urlparse

from jupyterhub.services.auth import HubOAuthCallbackHandler, HubOAuthenticated
from jupyterhub.utils import url_path_join
from tornado import ioloop, web


class SiteHandler(HubOAuthenticated, web.StaticFileHandler):
    """A file of the built site, for a user the hub has logged in (others are sent to the hub's login)."""

    @web.authenticated
    async def get(self, path: str, include_body: bool = True) -> None:  # noqa: D102 - StaticFileHandler's
        await super().get(path, include_body)

    @web.authenticated
    async def head(self, path: str) -> None:  # noqa: D102 - StaticFileHandler's
        await super().head(path)


def make_app(site_dir: Path, prefix: str) -> web.Application:
    """The tornado application: the OAuth callback and the site's files under ``prefix``.

    Raises:
        SystemExit: ``site_dir`` holds no ``index.html`` (the message says how to build it).
    """
    if not (site_dir / "index.html").is_file():
        raise SystemExit(f"course_site: {site_dir} holds no index.html; build the site in the course clone "
                         "(make site) and run install.sh again, or set ATTNLAB_SITE_DIR to a built site.")
    return web.Application([
        (url_path_join(prefix, "oauth_callback"), HubOAuthCallbackHandler),
        (url_path_join(prefix, "(.*)"), SiteHandler, {"path": str(site_dir), "default_filename": "index.html"}),
    ], cookie_secret=secrets.token_bytes(32))


def main() -> None:
    """Listen where the hub says (``JUPYTERHUB_SERVICE_URL``) and serve until stopped."""
    prefix = os.environ.get("JUPYTERHUB_SERVICE_PREFIX", "/services/course/")
    url = urlparse(os.environ.get("JUPYTERHUB_SERVICE_URL", "http://127.0.0.1:10101"))
    if not os.environ.get("ATTNLAB_SITE_DIR"):
        sys.exit("course_site: ATTNLAB_SITE_DIR is not set; the hub's configuration gives it the built site's folder")
    site_dir = Path(os.environ.get("ATTNLAB_SITE_DIR")).resolve()
    app = make_app(site_dir, prefix)
    app.listen(url.port or 80, url.hostname or "127.0.0.1")
    print(f"course_site: serving {site_dir} at {prefix}", file=sys.stderr, flush=True)
    ioloop.IOLoop.current().start()


if __name__ == "__main__":
    main()
