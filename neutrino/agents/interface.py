"""Interface drivers: how an agent plugs a device it owns into the L2 fabric.

The DHCP agent's ``tap`` in ``qdhcp-<net>``, the L3 agent's ``qr-``/``qg-``
devices in ``qrouter-<router>``: each is a Neutron port, created through the
server, that must appear as a Linux device inside a namespace and be
attached to the host's integration point (an Open vSwitch ``br-int`` port
tagged with ``external_ids:iface-id=<port_id>`` so the L2 agent wires it,
or a Linux bridge). Agents depend on this interface only; which driver a
host uses is configuration (``[DEFAULT] interface_driver``, upstream's
option), so the same DHCP and L3 agents run on either L2 design.
"""
from __future__ import annotations

import abc
import importlib
from typing import Any, NamedTuple

from oslo_config import cfg
from stevedore import driver

from neutrino.conf.agents import common as agent_conf

NAMESPACE = "neutrino.interface_drivers"


def load(conf: cfg.ConfigOpts) -> "InterfaceDriver":
    """The configured driver, by alias then by class path; a missing or
    unknown one is a ValueError naming the option."""
    agent_conf.register_interface(conf)
    name = conf.interface_driver
    if not name:
        raise ValueError("[DEFAULT] interface_driver is required")
    try:
        cls: Any = driver.DriverManager(NAMESPACE, name, invoke_on_load=False).driver
    except Exception:  # noqa: BLE001 - not an alias: try it as a class path
        path = name.replace(":", ".")
        module, _, attr = path.rpartition(".")
        try:
            cls = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError, ValueError) as exc:
            raise ValueError(f"interface_driver {name!r}: no such alias or class "
                             f"({exc})") from None
    return cls.from_conf(conf)


class Attachment(NamedTuple):
    """A device to attach: its name, its Neutron port and its MAC."""

    device_name: str
    port_id: str
    mac_address: str


class InterfaceDriver(abc.ABC):
    """Plugs and unplugs one port's device; idempotent both ways."""

    @abc.abstractmethod
    def plug(self, network_id: str, port_id: str, device_name: str, mac_address: str,
             namespace: str | None = None, mtu: int | None = None) -> None:
        """Create ``device_name`` with ``mac_address`` in ``namespace`` (created
        when missing), attached for ``port_id``; a device already there is kept."""

    @abc.abstractmethod
    def unplug(self, device_name: str, namespace: str | None = None) -> None:
        """Remove the device; absent is fine."""

    def attached(self, device_names: list[str]) -> set[str]:
        """Of devices already in their namespace, those still attached as
        ``plug`` leaves them, which need no ``plug`` (a restarted agent then
        asks nothing per device). None by default: each is plugged again,
        which is idempotent."""
        return set()

    def attach_all(self, devices: list[Attachment]) -> None:
        """Before a pass plugs ``devices`` (each then still given to ``plug``):
        a driver whose attachments cost most when made one by one (a switch
        reconfigured per port) makes those missing here, together, and
        remembers for the pass what it found. Nothing by default: ``plug``
        does all of it."""

    @classmethod
    def from_conf(cls, conf: cfg.ConfigOpts) -> "InterfaceDriver":
        """The driver as a host's configuration sets it up."""
        return cls()

    @staticmethod
    def device_name(prefix: str, port_id: str) -> str:
        """Upstream's device names: a prefix and the port id, 14 characters
        (``tap1234abcd-ef``, ``qr-1234abcd-ef``), within Linux's 15."""
        return (prefix + port_id)[:14]
