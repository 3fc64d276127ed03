"""The Linux bridge agent's adapter to a real host (``host.BridgeHost``):
bridges, VXLAN devices, their forwarding entries and the nftables ruleset,
all in one network namespace (``None``: the agent's own). Links go through
``iproute``.
"""
from __future__ import annotations

import json
import subprocess
from typing import Any

from neutrino.agents import iproute
from neutrino.agents.linuxbridge.host import FLOOD_MAC, BridgeHost

__all__ = ["FLOOD_MAC", "Host"]


def _run(namespace: str | None, *argv: str, stdin: str | None = None,
         check: bool = True) -> str:
    cmd = (["ip", "netns", "exec", namespace] if namespace else []) + list(argv)
    done = subprocess.run(cmd, capture_output=True, text=True, input=stdin)
    if check and done.returncode:
        raise iproute.IpError(f"{' '.join(argv)}: {done.stderr.strip()}")
    return done.stdout


class Host(BridgeHost):
    def __init__(self, namespace: str | None = None) -> None:
        self.ns = namespace

    # -- links -------------------------------------------------------------------------

    def links(self) -> dict[str, dict[str, Any]]:
        """Every link by name, with ``master`` (its bridge) when enslaved."""
        return {link["ifname"]: link for link in iproute.links(self.ns)}

    def ensure_bridge(self, name: str) -> None:
        if not iproute.link_exists(name, self.ns):
            iproute.ip("link", "add", name, "type", "bridge", namespace=self.ns)
        iproute.ip("link", "set", name, "up", namespace=self.ns)

    def ensure_vxlan(self, name: str, vni: int, local_ip: str, port: int,
                     group: str | None, learning: bool, ttl: int | None,
                     tos: int | None) -> None:
        if iproute.link_exists(name, self.ns):
            return
        args = ["link", "add", name, "type", "vxlan", "id", str(vni), "local", local_ip,
                "dstport", str(port)]
        if group:
            args += ["group", group, "dev", self.device_of(local_ip)]
        if not learning:
            args.append("nolearning")
        if ttl:
            args += ["ttl", str(ttl)]
        if tos:
            args += ["tos", str(tos)]
        iproute.ip(*args, namespace=self.ns)

    def device_of(self, address: str) -> str:
        """The device holding ``address`` (a multicast VXLAN joins the group there)."""
        for link in json.loads(iproute.ip("-json", "addr", "show", namespace=self.ns) or "[]"):
            if any(a.get("local") == address for a in link.get("addr_info", [])):
                return str(link["ifname"])
        raise iproute.IpError(f"no device holds {address}")

    def enslave(self, device: str, bridge: str, up: bool = True,
                mtu: int | None = None) -> None:
        mtu_args = ["mtu", str(mtu)] if mtu else []
        iproute.ip("link", "set", device, "master", bridge, *mtu_args,
                   "up" if up else "down", namespace=self.ns)

    def release(self, device: str) -> None:
        if iproute.link_exists(device, self.ns):
            iproute.ip("link", "set", device, "nomaster", namespace=self.ns)

    def delete(self, device: str) -> None:
        iproute.delete_link(device, self.ns)

    # -- VXLAN forwarding entries ----------------------------------------------------

    def fdb(self, device: str) -> set[tuple[str, str]]:
        """(mac, remote endpoint) entries of a VXLAN device."""
        out = _run(self.ns, "bridge", "-json", "fdb", "show", "dev", device)
        return {(e["mac"], e["dst"]) for e in json.loads(out or "[]") if e.get("dst")}

    def fdb_add(self, device: str, mac: str, dst: str) -> None:
        verb = "append" if mac == FLOOD_MAC else "replace"
        _run(self.ns, "bridge", "fdb", verb, mac, "dev", device, "dst", dst)

    def fdb_del(self, device: str, mac: str, dst: str) -> None:
        _run(self.ns, "bridge", "fdb", "del", mac, "dev", device, "dst", dst, check=False)

    def neigh_replace(self, device: str, ip: str, mac: str) -> None:
        iproute.ip("neigh", "replace", ip, "lladdr", mac, "dev", device, "nud", "permanent",
                   namespace=self.ns)

    # -- nftables --------------------------------------------------------------------

    def nft_load(self, ruleset: str) -> None:
        _run(self.ns, "nft", "-f", "-", stdin=ruleset)
