"""Version and extension discovery documents."""
from __future__ import annotations

import falcon

from neutrino import errors
from neutrino.api.controller import Api, base_url, send
from neutrino.resources.extensions import KNOWN


class Versions:
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        href = f"{base_url(req)}/v2.0/"
        send(resp, 200, {"versions": [{"id": "v2.0", "status": "CURRENT",
                                       "links": [{"rel": "self", "href": href}]}]})


class V2Root:
    def __init__(self, api: Api) -> None:
        self.api = api

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        base = base_url(req)
        send(resp, 200, {"resources": [
            {"name": r.singular, "collection": r.plural,
             "links": [{"rel": "self", "href": f"{base}/v2.0/{r.url_plural}"}]}
            for r in self.api.resources.values() if r.parent is None]})


class Extensions:
    def __init__(self, api: Api) -> None:
        self.api = api

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        send(resp, 200, {"extensions": [KNOWN[a].as_dict() for a in self.api.aliases]})


class Extension:
    def __init__(self, api: Api) -> None:
        self.api = api

    def on_get(self, req: falcon.Request, resp: falcon.Response, alias: str) -> None:
        if alias not in self.api.aliases:
            raise errors.ExtensionNotFound(extension_alias=alias)
        send(resp, 200, {"extension": KNOWN[alias].as_dict()})
