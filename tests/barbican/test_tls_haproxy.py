"""haproxy, in its namespace on the agent's host adapter, serving TLS with a
certificate the Barbican store read (a PKCS12 secret its owner shared)."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from oslo_config import cfg

from neutrino.agents.loadbalancer import plan
from neutrino.conf import lb_haproxy as lb_conf
from neutrino.context import Context
from neutrino.plugins.lb_haproxy.barbican import BarbicanStore
from neutrino.resources.lb_graph import LoadBalancer
from tests.barbican.conftest import Barbican, Users, authtoken
from tests.barbican.kms import Kms, p12
from tests.fullstack.hosts import sh
from tests.keystone.conftest import Keystone
from tests.lbhaproxy import certs
from tests.lbhaproxy import graphs as g
from tests.lbhaproxy.test_linux_host import (  # noqa: F401 - the haproxy lab fixture
    TLS_LISTENER,
    Served,
    lb_payload,
    served,
)
from tests.lbhaproxy.test_linux_host import pytestmark as needs_root_and_haproxy
from tests.waiting import wait_for

pytestmark = [needs_root_and_haproxy, pytest.mark.keystone, pytest.mark.barbican]


def test_haproxy_serves_the_certificate_of_a_barbican_secret(
        served: Served, keystone: Keystone, barbican: Barbican, users: Users,  # noqa: F811
        tmp_path: Path) -> None:
    cert, key = certs.make("tls.example.com")
    ref = Kms(barbican.url, users.a.token).secret(p12(cert, key))
    conf = cfg.ConfigOpts()
    lb_conf.register(conf)
    path = tmp_path / "neutron.conf"
    path.write_text("[certificates]\ncert_manager = barbican_cert_manager\n"
                    + authtoken(keystone, users))
    conf([], project="neutrino", default_config_files=[str(path)])
    store = BarbicanStore(conf)
    a = users.a
    store.check(Context(user_id=a.user_id, project_id=a.project_id, roles=a.roles,
                        auth_token=a.token), [ref], [])

    tls = dict(g.graph()["listeners"][0], id=TLS_LISTENER, protocol="TERMINATED_HTTPS",
               protocol_port=443, default_tls_container_ref=ref, l7policies=[])
    payload = lb_payload()
    payload["loadbalancer"]["listeners"].append(tls)
    listener = LoadBalancer.from_dict(payload["loadbalancer"]).listener(TLS_LISTENER)
    assert listener is not None
    payload["certificates"] = {TLS_LISTENER: store.for_listener(listener)}
    deployment = plan.deployment(payload, str(served.lb_host.root / g.LB))
    assert deployment is not None
    served.lb_host.reload(deployment)
    ca = tmp_path / "ca.pem"
    ca.write_bytes(cert)

    def https() -> subprocess.CompletedProcess[str]:
        return sh("ip", "netns", "exec", served.client, "curl", "-s", "-S", "-m", "5",
                  "--cacert", str(ca), "--resolve", "tls.example.com:443:10.0.0.10",
                  "https://tls.example.com/x", check=False)
    assert wait_for(lambda: https().stdout.startswith("m"), 10), https().stderr
