"""Placement options, with upstream's names, groups and defaults: what an L2
agent reports of its devices' bandwidth and packet processing capacity
(``[ovs] resource_provider_*``), the name the server gives tunnelled
networks' provider (``[ml2] tunnelled_network_rp_name``) and how the server
reaches Placement (``[placement]``, keystoneauth's session and auth options).

The parsers turn the agent's options into the dictionaries its state report
carries in ``configurations``, as upstream's agents do; a malformed value is
a ``ValueError`` naming the option, which stops the agent at start-up.
"""
from __future__ import annotations

import socket
from typing import Any, Iterable

from oslo_config import cfg

from neutrino.conf import keystone_client
from neutrino.conf.registry import register_missing

_INVENTORY_DEFAULTS = {"allocation_ratio": 1.0, "min_unit": 1, "step_size": 1, "reserved": 0}
INVENTORY_KEYS = frozenset(
    ("allocation_ratio", "max_unit", "min_unit", "reserved", "step_size"))

RP_OPTS = [
    cfg.ListOpt("resource_provider_bandwidths", default=[],
                help="Comma-separated list of <bridge>:<egress_bw>:<ingress_bw> tuples: "
                     "the bandwidth (kbps, from the VM's point of view) available on a "
                     "bridge of bridge_mappings. A bridge not listed gets no resource "
                     "provider; an omitted direction gets no inventory."),
    cfg.DictOpt("resource_provider_hypervisors", default={},
                help="Mapping of bridges to hypervisors: <bridge>:<hypervisor>,... (the "
                     "parent of the bridge's resource provider, when it is not "
                     "resource_provider_default_hypervisor)."),
    cfg.ListOpt("resource_provider_packet_processing_without_direction", default=[],
                help="Comma-separated list of <hypervisor>:<packet_rate> tuples: the "
                     "minimum packet rate (kpps) the OVS backend can guarantee; an empty "
                     "hypervisor means DEFAULT.host."),
    cfg.ListOpt("resource_provider_packet_processing_with_direction", default=[],
                help="As resource_provider_packet_processing_without_direction, per "
                     "direction: <hypervisor>:<egress_pkt_rate>:<ingress_pkt_rate>. The two "
                     "options are mutually exclusive."),
    cfg.StrOpt("resource_provider_default_hypervisor",
               help="The default hypervisor name used to locate the parent of the "
                    "resource provider. If this option is not set, canonical name is used"),
    cfg.DictOpt("resource_provider_inventory_defaults", default=dict(_INVENTORY_DEFAULTS),
                help="Key:value pairs to specify defaults used while reporting resource "
                     "provider inventories: allocation_ratio:float, max_unit:int, "
                     "min_unit:int, reserved:int, step_size:int."),
    cfg.DictOpt("resource_provider_packet_processing_inventory_defaults",
                default=dict(_INVENTORY_DEFAULTS),
                help="Key:value pairs to specify defaults used while reporting packet rate "
                     "inventories (the keys of resource_provider_inventory_defaults)."),
]
TUNNELLED_OPTS = [
    cfg.StrOpt("tunnelled_network_rp_name", default="rp_tunnelled",
               help="Resource provider name for the host with tunnelled networks: the "
                    "device standing for the bandwidth of all tunnelled networks of a "
                    "compute node. Used by both the server and the agents."),
]
PLACEMENT_OPTS = [
    cfg.StrOpt("region_name", help="Name of placement region to use. Useful if keystone "
                                   "manages more than one region."),
    cfg.StrOpt("endpoint_type", default="public", choices=["public", "admin", "internal"],
               help="Type of the placement endpoint to use. This endpoint will be looked up "
                    "in the keystone catalog and should be one of public, internal or "
                    "admin."),
]
GROUP = "placement"


def register_agent(conf: cfg.ConfigOpts) -> None:
    """The OVS agent's: its devices' capacities, and the tunnels' device name."""
    register_missing(conf, RP_OPTS, "OVS")
    register_missing(conf, TUNNELLED_OPTS, "ml2")


def register_server(conf: cfg.ConfigOpts) -> None:
    register_missing(conf, TUNNELLED_OPTS, "ml2")
    register_missing(conf, PLACEMENT_OPTS, GROUP)
    register_missing(conf, keystone_client.options(), GROUP)


# -- the agent's reported values ---------------------------------------------------------

def _rate(option: str, text: str) -> int | None:
    if not text:
        return None
    try:
        rate = int(text)
    except ValueError:
        rate = -1
    if rate < 0:
        raise ValueError(f"Cannot parse {option}: expected a non-negative integer, "
                         f"got: {text}")
    return rate


def _tuples(option: str, items: Iterable[str], keys: tuple[str, ...]) -> dict[str, Any]:
    """``name:rate:rate`` items (rates may be empty, or all omitted)."""
    out: dict[str, Any] = {}
    for item in items:
        parts = item.split(":") if ":" in item else [item, *[""] * len(keys)]
        if len(parts) != len(keys) + 1:
            raise ValueError(f"Cannot parse {option}: expected a tuple with "
                             f"{len(keys) + 1} values, got: {item}")
        name = parts[0]
        if name in out:
            raise ValueError(f'Cannot parse {option}: same resource name listed multiple '
                             f'times: "{name}"')
        out[name] = {key: _rate(option, value) for key, value in zip(keys, parts[1:])}
    return out


def _on_host(option: str, parsed: dict[str, Any], host: str) -> dict[str, Any]:
    """An empty hypervisor name is the agent's own host."""
    if "" in parsed:
        if host in parsed:
            raise ValueError(f"Cannot parse {option}: {host} is given both by name and as "
                             "the default hypervisor")
        parsed[host] = parsed.pop("")
    return parsed


def inventory_defaults(option: str, values: dict[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(values) - INVENTORY_KEYS)
    if unknown:
        raise ValueError(f"Cannot parse {option}: unexpected options: {','.join(unknown)}")
    out: dict[str, Any] = {}
    for key, value in values.items():
        try:
            number: float = float(value) if key == "allocation_ratio" else int(value)
        except (TypeError, ValueError):
            number = -1
        if number < 0:
            raise ValueError(f"Cannot parse {option}.{key}: expected a non-negative number, "
                             f"got: {value}")
        out[key] = number
    return out


def agent_report(conf: cfg.ConfigOpts, host: str,
                 bridge_mappings: dict[str, str]) -> dict[str, Any]:
    """The placement part of the OVS agent's ``configurations``, under
    upstream's keys; refuses bandwidths of bridges the agent does not map."""
    ovs = conf.OVS
    bandwidths = _tuples("resource_provider_bandwidths", ovs.resource_provider_bandwidths,
                         ("egress", "ingress"))
    tunnelled = conf.ml2.tunnelled_network_rp_name
    devices = set(bridge_mappings.values()) | {tunnelled}
    for device in bandwidths:
        if device not in devices:
            raise ValueError(f"Invalid resource_provider_bandwidths: Device name {device} "
                             "is missing from device mappings")
    without = "resource_provider_packet_processing_without_direction"
    with_ = "resource_provider_packet_processing_with_direction"
    pp_without = _on_host(without, _tuples(without, ovs[without], ("any",)), host)
    pp_with = _on_host(with_, _tuples(with_, ovs[with_], ("egress", "ingress")), host)
    if pp_without and pp_with:
        raise ValueError(f"{without} and {with_} configuration options are mutually "
                         "exclusive.")
    default = ovs.resource_provider_default_hypervisor or socket.gethostname()
    return {
        "resource_provider_bandwidths": bandwidths,
        "resource_provider_inventory_defaults": inventory_defaults(
            "resource_provider_inventory_defaults", ovs.resource_provider_inventory_defaults),
        without: pp_without,
        with_: pp_with,
        "resource_provider_packet_processing_inventory_defaults": inventory_defaults(
            "resource_provider_packet_processing_inventory_defaults",
            ovs.resource_provider_packet_processing_inventory_defaults),
        "resource_provider_hypervisors": {
            device: ovs.resource_provider_hypervisors.get(device) or default
            for device in sorted(devices)},
    }
