"""The packet-path tracer's extension (``neutrino-trace``), neutrino's own.

``POST /v2.0/trace`` takes one packet, ``{"trace": {...}}`` with these
attributes, and answers its path and verdict. The source is a port
(``port_id``, sending from its first fixed IP of the destination's version
or from ``source_ip``) or, without a port, ``source_ip``: an address
outside the cloud, or a floating IP whose port then sends. With ``live``, the
agents of the hosts on the path run the same packet through their switch
and router namespace, and the answer's ``live`` sets their verdicts beside
the model's, hop by hop. Not a stored resource: the
attributes are the request's shape, checked by the same validators as
resources' bodies.
"""
from __future__ import annotations

from neutrino.resources import validators as v
from neutrino.resources.extensions import ExtensionDescriptor, register

ALIAS = "neutrino-trace"
TRACE_EXT = ExtensionDescriptor(
    ALIAS, "Packet path tracer",
    "Traces one packet from a port or an outside address to a destination: the "
    "hops, the security group rules, routes and translations that decide it, and "
    "the verdict.", "2026-12-06T00:00:00-00:00")
register(TRACE_EXT)

PROTOCOLS = ("icmp", "tcp", "udp", "sctp", "ipv6-icmp")
# name -> (validator, whether the request must give it)
ATTRIBUTES: dict[str, tuple[v.Validator, bool]] = {
    "port_id": (v.uuid, False),
    "source_ip": (v.ip_address, False),
    "destination_ip": (v.ip_address, True),
    "protocol": (v.values(*PROTOCOLS), True),
    "destination_port": (v.integer(0, 65535), False),
    # also run the packet through the hosts' switches and routers (``trace --live``)
    "live": (v.boolean, False),
}
