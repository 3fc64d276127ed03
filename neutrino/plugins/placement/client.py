"""Placement's HTTP API, as much as neutrino needs: for the placement
report, providers found by name, made or renamed under their parent, and
the traits and inventories of a provider set whole; for QoS, a consumer's
allocation changed by a difference.

Requests go through a keystoneauth session built from ``[placement]``
(an ``auth_type`` and its options; ``admin_token`` with an ``endpoint``
reaches a Placement without Keystone), made on first use so that a process
that never reports builds none.
"""
from __future__ import annotations

import logging
from typing import Any
from urllib.parse import quote

from oslo_config import cfg

from neutrino import errors
from neutrino.conf.placement import GROUP

LOG = logging.getLogger(__name__)
# Placement 1.37: providers with parents, and PUT may move one to another.
VERSION = "placement 1.37"
GENERATION_RETRIES = 3
# Upstream's neutron-lib tries an allocation's update this many times
# while other writers (the compute service) change the consumer.
ALLOCATION_RETRIES = 10
CONCURRENT_UPDATE = "placement.concurrent_update"


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

    def update_allocation(self, consumer: str, diff: dict[str, dict[str, int]]) -> None:
        """Add ``diff`` (provider -> resource class -> signed amount) to the
        consumer's allocation, as upstream's ``update_qos_allocation``: read
        it, change it, write it back at the consumer's generation, again
        when another writer got in between. A class brought to zero, then a
        provider left empty, leaves the allocation. Refusals are Neutron's
        errors; an unreachable Placement is ``ServiceUnavailable``."""
        path = f"/allocations/{consumer}"
        for _ in range(ALLOCATION_RETRIES):
            try:
                body = self._ok(self._request("GET", path), "GET", path)
            except PlacementError as exc:
                raise _unavailable(exc) from exc
            allocations = body["allocations"]
            if not allocations:
                raise errors.PlacementAllocationRemoved(consumer=consumer)
            for provider, amounts in diff.items():
                if provider not in allocations:
                    raise errors.PlacementAllocationRpNotExists(
                        resource_provider=provider, consumer=consumer)
                held = allocations[provider]["resources"]
                for rc, delta in amounts.items():
                    total = held.get(rc, 0) + delta
                    if total > 0:
                        held[rc] = total
                    else:
                        held.pop(rc, None)
            body["allocations"] = {rp: {"resources": a["resources"]}
                                   for rp, a in allocations.items() if a["resources"]}
            try:
                response = self._request("PUT", path, body)
            except PlacementError as exc:
                raise _unavailable(exc) from exc
            if response.status_code != 409:
                try:
                    self._ok(response, "PUT", path)
                except PlacementError as exc:
                    raise _unavailable(exc) from exc
                return
            if _error_code(response) != CONCURRENT_UPDATE:
                raise errors.QosPlacementAllocationUpdateConflict(alloc_diff=diff,
                                                                  consumer=consumer)
        raise errors.PlacementAllocationGenerationConflict(consumer=consumer)


def _error_code(response: Any) -> str:
    try:
        return str(response.json()["errors"][0].get("code", ""))
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        return ""


def _unavailable(exc: PlacementError) -> errors.ServiceUnavailable:
    """What the client sees when Placement failed otherwise than by refusing
    the change: no internals, which go to the log."""
    LOG.warning("placement: %s", exc)
    return errors.ServiceUnavailable("The placement service could not update the allocation.")
