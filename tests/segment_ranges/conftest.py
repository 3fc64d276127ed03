"""A server with the ``network_segment_range`` service plugin: VXLAN project
networks, VLAN ranges on one physical network, GRE loaded, Geneve not."""
from __future__ import annotations

import uuid
from typing import Any, Iterator

import pytest

from tests.api._helpers import created
from tests.conftest import Client, Server

DEFAULT_VNIS = (1, 50)
CONF = ("service_plugins = network_segment_range\n"
        "[ml2]\ntype_drivers = flat,vlan,vxlan,gre\ntenant_network_types = vxlan\n"
        "[ml2_type_vlan]\nnetwork_vlan_ranges = physnet1:100:120,physnet2\n"
        f"[ml2_type_vxlan]\nvni_ranges = {DEFAULT_VNIS[0]}:{DEFAULT_VNIS[1]}\n"
        "[ml2_type_gre]\ntunnel_id_ranges = 1:10\n")
PATH = "/v2.0/network-segment-ranges"


@pytest.fixture(scope="package")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("segranges"), extra=CONF).start()
    yield srv
    srv.stop()


def make_range(admin: Client, **attrs: Any) -> dict[str, Any]:
    """A private VXLAN range of a new project unless told otherwise."""
    body: dict[str, Any] = {"name": f"r-{uuid.uuid4().hex[:6]}", "shared": False,
                            "project_id": uuid.uuid4().hex, "network_type": "vxlan",
                            "physical_network": "", **attrs}
    return created(admin.post(PATH, {"network_segment_range": body}), "network_segment_range")


_next = iter(range(1000, 10 ** 6, 10))


def fresh_ids(size: int = 6) -> tuple[int, int]:
    """A VXLAN id range (outside the defaults) no other test of the run uses."""
    lo = next(_next)
    return lo, lo + size - 1
