"""Metadata in a router's namespace: the proxy and the port it listens on.

Requests of instances to 169.254.169.254:80 arriving on an internal (qr-)
device are marked and redirected to ``metadata_port``, where the router's
proxy listens; only marked packets reach that port, so nothing on an
external network can talk to the proxy directly (upstream's mark 0x1, its
REDIRECT and its INPUT rules, here in the router's nft table). With
``enable_metadata_proxy = False`` the router has neither rules nor proxy.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from neutrino.agents.metadata.proxies import ROUTER, MetadataProxies
from neutrino.conf.agents import l3 as l3_conf

METADATA_IP = "169.254.169.254"
BIND_ADDRESS = "0.0.0.0"


@dataclasses.dataclass(frozen=True)
class RouterMetadata:
    proxies: MetadataProxies
    port: int
    mark: str

    def ensure(self, router_id: str, namespace: str) -> None:
        self.proxies.ensure(router_id, namespace, BIND_ADDRESS, self.port)

    def stop(self, router_id: str) -> None:
        self.proxies.stop(router_id)

    def running(self) -> list[str]:
        return self.proxies.running()


def from_conf(conf: Any) -> RouterMetadata | None:
    l3_conf.register_metadata_proxy(conf)
    if not conf.enable_metadata_proxy:
        return None
    return RouterMetadata(MetadataProxies(conf.state_path, conf.metadata_proxy_socket, ROUTER),
                          conf.metadata_port, conf.metadata_access_mark)


def rules(port: int, mark: str) -> dict[str, list[str]]:
    """The nft rules per chain of the router's table (see ``nat``)."""
    match = f'iifname "qr-*" ip daddr {METADATA_IP} tcp dport 80'
    return {"mangle_prerouting": [f"{match} meta mark set {mark}"],
            "prerouting": [f"{match} redirect to :{port}"],
            "input": [f"meta mark & 0xffff == {mark} accept",
                      f"tcp dport {port} drop"]}
