"""``/topology``: the live topology page, with ``[topology] enabled``.

The page and its script are static files of the package and carry no data:
the script reads the API itself (``/v2.0/...``) with the caller's token, so
what a caller sees is exactly what the API's policy lets them list (a
project's member their project's and the shared resources, an admin
everything, hosts and agents included). That is why these few files are
served without a token, as version discovery is: a browser cannot send a
Keystone token when it opens a page.
"""
from __future__ import annotations

import html
from importlib import resources

import falcon

from neutrino import errors

PREFIX = "/topology"
ASSETS = {"topology.js": "text/javascript; charset=utf-8",
          "topology.css": "text/css; charset=utf-8"}


# The page runs only its own script and style and talks only to this server,
# which keeps a token it holds from being sent anywhere else.
HEADERS = {"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff",
           "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; "
                                      "frame-ancestors 'none'"}


def _asset(name: str) -> bytes:
    return resources.files("neutrino.api").joinpath("topology_assets", name).read_bytes()


class TopologyPage:
    """``GET /topology``: the page, told how often to read the API."""

    def __init__(self, poll_interval: int) -> None:
        page = _asset("index.html").decode()
        self.body = page.replace("{{poll_ms}}", html.escape(str(poll_interval * 1000))).encode()

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.content_type = "text/html; charset=utf-8"
        resp.set_headers(HEADERS)
        resp.data = self.body


class TopologyAsset:
    """``GET /topology/{name}``: the page's script and style, nothing else
    (404 for any other name)."""

    def __init__(self) -> None:
        self.bodies = {name: _asset(name) for name in ASSETS}

    def on_get(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        body = self.bodies.get(name)
        if body is None:
            raise errors.HTTPNotFound()
        resp.content_type = ASSETS[name]
        resp.set_headers(HEADERS)
        resp.data = body


def add_routes(app: falcon.App, poll_interval: int) -> None:
    app.add_route(PREFIX, TopologyPage(poll_interval))
    app.add_route(PREFIX + "/{name}", TopologyAsset())


def is_page(path: str) -> bool:
    """Whether ``path`` is one of the page's anonymous files."""
    return path == PREFIX or path.startswith(PREFIX + "/")
