"""``neutrino audit --repair`` on an HA router: the agent puts back what
keepalived's last state says (it does not notice an address or a route
changed behind its back), on a host that records what it is asked."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from neutrino.agents.l3 import model
from neutrino.agents.l3.router import RouterManager
from tests.l3host.test_keepalived import ha_router


class Host:
    """The namespace's addresses and next-hop routes, as the adapter reads them."""

    def __init__(self, addresses: dict[str, set[str]], routes: list[dict[str, Any]]) -> None:
        self.held = addresses
        self.routes = routes
        self.announced: list[tuple[str, list[str]]] = []

    def addresses(self, ns: str, device: str) -> set[str]:
        return set(self.held.get(device, set()))

    def add_address(self, ns: str, device: str, cidr: str) -> None:
        self.held.setdefault(device, set()).add(cidr)

    def delete_address(self, ns: str, device: str, cidr: str) -> None:
        self.held[device].discard(cidr)

    def announce(self, ns: str, device: str, addresses: list[str]) -> None:
        self.announced.append((device, addresses))

    def gateway_routes(self, ns: str, version: int) -> list[dict[str, Any]]:
        return [r for r in self.routes if (":" in r["gateway"]) == (version == 6)]

    def replace_route(self, ns: str, destination: str, nexthop: str,
                      device: str | None = None, onlink: bool = False) -> None:
        self.routes.append({"dst": destination, "gateway": nexthop})


def _manager(tmp: Path, state: str, host: Host) -> tuple[RouterManager, model.DesiredRouter]:
    desired = model.desired_router(ha_router())
    manager = RouterManager(None, host=host, ha_confs_path=str(tmp))  # type: ignore[arg-type]
    manager.applied[desired.router_id] = desired
    (tmp / desired.router_id).mkdir()
    (tmp / desired.router_id / "state").write_text(state)
    return manager, desired


def test_a_master_gets_back_a_vip_and_a_route_removed_behind_keepalived_s_back(
        tmp_path: Path) -> None:
    host = Host({"qr-aaaaaaaa-11": set(),
                 "qg-cccccccc-11": {"172.24.4.10/24", "172.24.4.20/32"},
                 "ha-dddddddd-11": {"169.254.192.7/18", "169.254.0.3/24"}},
                [{"dst": "default", "gateway": "172.24.4.1"}])
    manager, desired = _manager(tmp_path, "MASTER", host)
    manager.restore_vrrp_state(desired.router_id)
    assert host.held["qr-aaaaaaaa-11"] == {"10.100.1.1/24"}
    assert host.announced == [("qr-aaaaaaaa-11", ["10.100.1.1"])]
    assert {"dst": "10.200.0.0/16", "gateway": "10.100.1.254"} in host.routes
    assert host.held["ha-dddddddd-11"] == {"169.254.192.7/18", "169.254.0.3/24"}


def test_a_backup_holding_a_vip_lets_it_go_and_keeps_its_own_ha_address(
        tmp_path: Path) -> None:
    host = Host({"qr-aaaaaaaa-11": {"10.100.1.1/24"}, "qg-cccccccc-11": set(),
                 "ha-dddddddd-11": {"169.254.192.7/18"}}, [])
    manager, desired = _manager(tmp_path, "BACKUP", host)
    manager.restore_vrrp_state(desired.router_id)
    assert host.held == {"qr-aaaaaaaa-11": set(), "qg-cccccccc-11": set(),
                         "ha-dddddddd-11": {"169.254.192.7/18"}}
    assert host.routes == [] and host.announced == []
