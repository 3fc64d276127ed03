"""DHCP for one network on this host: namespace, port device, files, dnsmasq.

``enable`` makes the host match a network description (idempotent: run it
again after any change and it converges), ``disable`` removes everything
the network had here. The network's files live in
``<dhcp_confs>/<network_id>/``; their presence (or a running metadata
proxy of the network) is how a restarted agent finds what it served before.

Unlike upstream, no iptables ``CHECKSUM --checksum-fill`` rule for the
replies (nftables has no such statement): the devices the interface drivers
plug are OVS internal ports, whose transmit checksumming is off, or veths
into a kernel bridge, which completes checksums itself, so dnsmasq's
replies leave complete either way.
"""
from __future__ import annotations

import ipaddress
import logging
import os
import shutil
import time
from typing import Any

from neutrino.agents import iproute, netns
from neutrino.agents.dhcp import dnsmasq
from neutrino.agents.dhcp.metadata import METADATA_CIDR, NetworkMetadata, route_ips
from neutrino.agents.dhcp.process import DnsmasqProcess
from neutrino.agents.files import read_text, write_atomic
from neutrino.agents.interface import Attachment, InterfaceDriver

LOG = logging.getLogger(__name__)

NS_PREFIX = "qdhcp-"


def namespace(network_id: str) -> str:
    return NS_PREFIX + network_id


def port_cidrs(network: dict[str, Any], port: dict[str, Any]) -> list[str]:
    """The DHCP port's addresses with their subnets' prefix lengths."""
    prefix = {s["id"]: ipaddress.ip_network(s["cidr"], strict=False).prefixlen
              for s in network.get("subnets") or []}
    return [f"{f['ip_address']}/{prefix[f['subnet_id']]}"
            for f in port.get("fixed_ips") or [] if f.get("subnet_id") in prefix]


class DnsmasqDriver:
    def __init__(self, confs_dir: str, settings: dnsmasq.Settings,
                 interface: InterfaceDriver, metadata: NetworkMetadata | None = None) -> None:
        self.confs_dir = os.path.abspath(confs_dir)
        self.settings = settings
        self.interface = interface
        self.metadata = metadata

    def files(self, network_id: str) -> dnsmasq.Files:
        return dnsmasq.Files(os.path.join(self.confs_dir, network_id))

    def process(self, network_id: str) -> DnsmasqProcess:
        return DnsmasqProcess(self.files(network_id).pid, namespace(network_id))

    def device_name(self, port: dict[str, Any]) -> str:
        prefix = getattr(self.interface, "DEV_NAME_PREFIX", "tap")
        return self.interface.device_name(prefix, port["id"])

    def existing(self) -> list[str]:
        """Networks this host has DHCP state for (from a previous run too)."""
        try:
            found = {d for d in os.listdir(self.confs_dir)
                     if os.path.isdir(os.path.join(self.confs_dir, d))}
        except FileNotFoundError:
            found = set()
        if self.metadata is not None:
            found.update(self.metadata.running())
        return sorted(found)

    # -- converge ---------------------------------------------------------------------------

    def attach_fresh(self, ports: dict[str, dict[str, Any]]) -> None:
        """Before a pass enables networks through ``ports`` (their DHCP
        ports, by network id): the devices of the networks with no namespace here yet go to
        the interface driver at once, so that a switch adds the ports missing
        in one transaction rather than one a network; ``enable`` plugs each
        after. A network with a namespace may be adopted as it is, without
        a plug, so its device is left to ``enable``."""
        fresh = [Attachment(self.device_name(port), port["id"], port["mac_address"])
                 for network_id, port in sorted(ports.items())
                 if not iproute.namespace_exists(namespace(network_id))]
        if fresh:
            self.interface.attach_all(fresh)

    def enable(self, network: dict[str, Any], port: dict[str, Any]) -> None:
        """Serve ``network`` through the DHCP port ``port`` (already created
        on the server); start dnsmasq, or make a running one re-read.

        A dnsmasq found running with the command line it would be given, on
        a device plugged as it would be plugged (``plugged`` records how), is
        adopted: only files that changed are rewritten, and dnsmasq is told
        to re-read them only then. A restarted agent thus leaves its
        networks' DHCP untouched instead of redoing every namespace."""
        ns, device = namespace(network["id"]), self.device_name(port)
        files = self.files(network["id"])
        metadata_on = self.metadata is not None and self.metadata.flags.any
        cidrs = port_cidrs(network, port) + ([METADATA_CIDR] if metadata_on else [])
        plugged = "\0".join([device, port["mac_address"], str(network.get("mtu") or 0),
                             *cidrs])
        argv = dnsmasq.command_line(network, self.settings, files)
        proc = self.process(network["id"])
        if (proc.active and read_text(files.conf_dir + "/cmdline") == "\0".join(argv)
                and read_text(files.conf_dir + "/plugged") == plugged
                and iproute.link_exists(device, ns)):
            changed = self._write_files(network, files, self._metadata_ips(network, port))
            if self.metadata is not None:
                self.metadata.converge(network, ns)
            if changed:
                proc.reload()
            return
        fresh = not iproute.namespace_exists(ns)
        if fresh:
            iproute.add_namespace(ns)
        else:
            iproute.ensure_namespace(ns)
        self._ignore_router_advertisements(ns)
        self.interface.plug(network["id"], port["id"], device, port["mac_address"],
                            namespace=ns, mtu=network.get("mtu") or None)
        if fresh:  # nothing there has an address yet: lo up and the port's, one ``ip``
            iproute.batch(ns, ["link set lo up", *(f"addr add {cidr} dev {device}"
                                                   for cidr in cidrs)])
        else:
            iproute.set_addresses(device, cidrs, namespace=ns)
        os.makedirs(files.conf_dir, exist_ok=True)
        write_atomic(files.conf_dir + "/plugged", plugged)
        changed = self._write_files(network, files, self._metadata_ips(network, port))
        if self.metadata is not None:
            self.metadata.converge(network, ns)
        if proc.active and read_text(files.conf_dir + "/cmdline") == "\0".join(argv):
            if changed:
                proc.reload()
            return
        proc.stop()  # a new subnet or MTU changes the command line: restart
        if not os.path.exists(files.leases):
            write_atomic(files.leases, dnsmasq.leases_file(network, self.settings, int(time.time())))
        proc.start(argv)
        write_atomic(files.conf_dir + "/cmdline", "\0".join(argv))

    def _metadata_ips(self, network: dict[str, Any], port: dict[str, Any]) -> dict[str, str]:
        if self.metadata is None:
            return {}
        return route_ips(network, port, self.metadata.flags)

    def _write_files(self, network: dict[str, Any], files: dnsmasq.Files,
                     metadata_ips: dict[str, str]) -> bool:
        """Write what differs from the files on disk; whether anything did."""
        rendered = dnsmasq.render(network, self.settings, files, metadata_ips)
        changed = False
        for path, text in ((files.host, rendered.hosts), (files.addn_hosts, rendered.addn_hosts),
                           (files.opts, rendered.opts)):
            if read_text(path) != text:
                write_atomic(path, text)
                changed = True
        return changed

    @staticmethod
    def _ignore_router_advertisements(ns: str) -> None:
        """The port's addresses are the fixed IPs the agent sets, nothing a
        router advertises (no SLAAC address, no learnt default route), as
        upstream. Set for devices yet to be made, so before the port is
        plugged: an RA may arrive as soon as it is."""
        if not os.path.isdir("/proc/sys/net/ipv6"):
            return  # a kernel without IPv6 (upstream checks the same)
        netns.write_sysctls(ns, {"net.ipv6.conf.default.accept_ra": "0"})

    def disable(self, network_id: str, device_name: str | None = None) -> None:
        """Stop serving ``network_id`` here and remove all of it."""
        ns = namespace(network_id)
        self.process(network_id).stop()
        if self.metadata is not None:
            self.metadata.stop(network_id)
        if device_name:
            self.interface.unplug(device_name, namespace=ns)
        elif iproute.namespace_exists(ns):
            for link in iproute.links(ns):
                if link["ifname"] != "lo":
                    self.interface.unplug(link["ifname"], namespace=ns)
        iproute.delete_namespace(ns)
        shutil.rmtree(self.files(network_id).conf_dir, ignore_errors=True)

