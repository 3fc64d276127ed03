"""What the BGP tests over RabbitMQ share."""
from __future__ import annotations

from typing import Any

from tests.conftest import Client

AGENT_TYPE = "BGP dynamic routing agent"
ML2 = ("[ml2]\ntype_drivers = flat,vlan,vxlan\ntenant_network_types = vxlan\n"
       "mechanism_drivers = openvswitch\n[ml2_type_vxlan]\nvni_ranges = 500:600\n"
       "[ml2_type_flat]\nflat_networks = *\n")


def made(client: Client, path: str, key: str, **attrs: Any) -> dict[str, Any]:
    status, body = client.post(path, {key: attrs})
    assert status == 201, body
    return dict(body[key])
