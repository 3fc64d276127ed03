"""Placement's HTTP API, as much as the placement report needs: providers
found by name, made or renamed under their parent, and the traits and
inventories of a provider set whole.

Requests go through a keystoneauth session built from ``[placement]``
(an ``auth_type`` and its options; ``admin_token`` with an ``endpoint``
reaches a Placement without Keystone), made on first use so that a process
that never reports builds none.
"""
from __future__ import annotations

from typing import Any
from urllib.parse import quote

from oslo_config import cfg

from neutrino.conf.placement import GROUP

# Placement 1.37: providers with parents, and PUT may move one to another.
VERSION = "placement 1.37"
GENERATION_RETRIES = 3


class PlacementError(Exception):
    """Placement refused a call (or could not be reached)."""


class PlacementClient:
    def __init__(self, conf: cfg.ConfigOpts) -> None:
        self.conf = conf
        self._session: Any = None

    def _request(self, method: str, path: str, body: Any = None) -> Any:
        if self._session is None:
            # deferred: keystoneauth1 is loaded only by a server that reports
            from keystoneauth1 import loading
            auth = loading.load_auth_from_conf_options(self.conf, GROUP)
            self._session = loading.load_session_from_conf_options(self.conf, GROUP, auth=auth)
        place = self.conf.placement
        try:
            return self._session.request(
                path, method, json=body, raise_exc=False,
                headers={"OpenStack-API-Version": VERSION, "Accept": "application/json"},
                endpoint_filter={"service_type": "placement", "interface": place.endpoint_type,
                                 "region_name": place.region_name})
        except Exception as exc:  # noqa: BLE001 - keystoneauth's connection and auth errors
            raise PlacementError(f"{method} {path}: {exc}") from exc

    def _ok(self, response: Any, method: str, path: str) -> Any:
        if response.status_code >= 400:
            raise PlacementError(f"{method} {path}: {response.status_code} "
                                 f"{response.text[:500]}")
        return response.json() if response.content else None

    def provider_uuid(self, name: str) -> str | None:
        path = f"/resource_providers?name={quote(name)}"
        found = self._ok(self._request("GET", path), "GET", path)["resource_providers"]
        return str(found[0]["uuid"]) if found else None

    def ensure_provider(self, uuid: str, name: str, parent: str) -> None:
        path = f"/resource_providers/{uuid}"
        body = {"name": name, "parent_provider_uuid": parent}
        response = self._request("PUT", path, body)
        if response.status_code == 404:
            self._ok(self._request("POST", "/resource_providers", {"uuid": uuid, **body}),
                     "POST", "/resource_providers")
            return
        self._ok(response, "PUT", path)

    def ensure_trait(self, name: str) -> None:
        path = f"/traits/{name}"
        self._ok(self._request("PUT", path), "PUT", path)

    def set_traits(self, uuid: str, traits: list[str]) -> None:
        self._put_generation(f"/resource_providers/{uuid}/traits", uuid, {"traits": traits})

    def set_inventories(self, uuid: str, inventories: dict[str, dict[str, Any]]) -> None:
        self._put_generation(f"/resource_providers/{uuid}/inventories", uuid,
                             {"inventories": inventories})

    def _put_generation(self, path: str, uuid: str, body: dict[str, Any]) -> None:
        """A whole set, at the provider's current generation; a concurrent
        change (409) reads the generation again."""
        provider = f"/resource_providers/{uuid}"
        for _ in range(GENERATION_RETRIES):
            generation = self._ok(self._request("GET", provider), "GET", provider)["generation"]
            response = self._request("PUT", path,
                                     {**body, "resource_provider_generation": generation})
            if response.status_code != 409:
                self._ok(response, "PUT", path)
                return
        self._ok(response, "PUT", path)
