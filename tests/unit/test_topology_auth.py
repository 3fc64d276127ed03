"""Who reaches the topology page's files without a token: the page and its
assets only (they hold no data), shorn of any identity header; everything
the page's script reads goes through authentication as any client's
request does."""
from __future__ import annotations

from typing import Any, Callable, Iterable

from neutrino.api import topology
from neutrino.api.app import with_auth


def _recorder(name: str, seen: list[tuple[str, dict[str, Any]]]) -> Any:
    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        seen.append((name, dict(environ)))
        return [b""]
    return app


def test_the_page_and_its_assets_are_anonymous_and_the_api_is_not() -> None:
    seen: list[tuple[str, dict[str, Any]]] = []
    app = with_auth(_recorder("app", seen), _recorder("auth", seen), anonymous=topology.is_page)
    for path in ("/topology", "/topology/topology.js", "/topologyx", "/v2.0/ports", "/metrics"):
        app({"PATH_INFO": path, "HTTP_X_ROLES": "admin"}, lambda *a: None)
    assert [name for name, _ in seen] == ["app", "app", "auth", "auth", "auth"]
    assert "HTTP_X_ROLES" not in seen[0][1] and "HTTP_X_ROLES" not in seen[1][1]


def test_without_the_page_nothing_else_is_anonymous() -> None:
    seen: list[tuple[str, dict[str, Any]]] = []
    app = with_auth(_recorder("app", seen), _recorder("auth", seen))
    app({"PATH_INFO": "/topology"}, lambda *a: None)
    assert [name for name, _ in seen] == ["auth"]
