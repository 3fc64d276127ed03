"""Conntrack helpers of a router: what the agent renders from ``_conntrack_helpers``
(pure), that the kernel here takes it (a scratch namespace), and real TFTP
through the router's SNAT."""
from __future__ import annotations

import uuid
from typing import Any

from neutrino.agents.l3 import cthelpers, model
from neutrino.agents.l3.linux import LinuxHost
from neutrino.agents.l3.router import RouterManager
from tests.l3host import tftp
from tests.l3host.fabric import Fabric, namespaces, need_root, sh
from tests.l3host.routers import gateway, interface, router

QR = interface("10.100.1.0/24", "10.100.1.1", "fa:16:3e:00:0a:01")


def _with(*helpers: tuple[str, str, int]) -> model.DesiredRouter:
    r = router([QR])
    r["_conntrack_helpers"] = [{"id": str(uuid.uuid4()), "helper": h, "protocol": p,
                                "port": n, "router_id": r["id"]} for h, p, n in helpers]
    return model.desired_router(r)


def test_each_helper_entry_assigns_its_protocol_and_port_to_one_object_per_helper() -> None:
    d = _with(("tftp", "udp", 69), ("ftp", "tcp", 2121), ("ftp", "tcp", 21),
              ("tftp", "udp", 69))
    assert d.conntrack_helpers == (model.ConntrackHelper("ftp", "tcp", 21),
                                   model.ConntrackHelper("ftp", "tcp", 2121),
                                   model.ConntrackHelper("tftp", "udp", 69))
    assert cthelpers.rules(d) == ['tcp dport 21 ct helper set "cth-ftp-tcp"',
                                  'tcp dport 2121 ct helper set "cth-ftp-tcp"',
                                  'udp dport 69 ct helper set "cth-tftp-udp"']
    assert cthelpers.replace_script(d) == (
        "table inet neutrino_cth\n"
        "delete table inet neutrino_cth\n"
        "table inet neutrino_cth {\n"
        '  ct helper cth-ftp-tcp { type "ftp" protocol tcp; l3proto inet; }\n'
        '  ct helper cth-tftp-udp { type "tftp" protocol udp; l3proto inet; }\n'
        "  chain prerouting {\n"
        "    type filter hook prerouting priority filter; policy accept;\n"
        '    tcp dport 21 ct helper set "cth-ftp-tcp"\n'
        '    tcp dport 2121 ct helper set "cth-ftp-tcp"\n'
        '    udp dport 69 ct helper set "cth-tftp-udp"\n'
        "  }\n"
        "}\n")


def test_h323_uses_the_kernels_helper_names() -> None:
    script = cthelpers.replace_script(_with(("h323", "udp", 1719), ("h323", "tcp", 1720)))
    assert 'ct helper cth-h323-udp { type "RAS" protocol udp; l3proto inet; }' in script
    assert 'ct helper cth-h323-tcp { type "Q.931" protocol tcp; l3proto inet; }' in script


def test_no_helper_leaves_no_table() -> None:
    d = model.desired_router(router([QR]))
    assert d.conntrack_helpers == ()
    assert cthelpers.replace_script(d) == ("table inet neutrino_cth\n"
                                           "delete table inet neutrino_cth\n")


def test_the_kernel_takes_the_table_and_a_replacement_drops_what_went() -> None:
    need_root()
    ns = "cth" + uuid.uuid4().hex[:8]
    host = LinuxHost()
    sh("ip", "netns", "add", ns)
    try:
        host.nft(ns, cthelpers.replace_script(_with(("ftp", "tcp", 21), ("tftp", "udp", 69))))
        listed = sh("ip", "netns", "exec", ns, "nft", "list", "table", "inet",
                    "neutrino_cth").stdout
        assert 'type "ftp" protocol tcp' in listed and 'type "tftp" protocol udp' in listed
        assert 'udp dport 69 ct helper set "cth-tftp-udp"' in listed
        host.nft(ns, cthelpers.replace_script(_with(("ftp", "tcp", 21))))
        listed = sh("ip", "netns", "exec", ns, "nft", "list", "table", "inet",
                    "neutrino_cth").stdout
        assert "tftp" not in listed and 'tcp dport 21 ct helper set "cth-ftp-tcp"' in listed
        host.nft(ns, cthelpers.replace_script(_with()))
        host.nft(ns, cthelpers.replace_script(_with()))  # absent is fine
        assert "neutrino_cth" not in sh("ip", "netns", "exec", ns, "nft", "list",
                                        "tables").stdout
    finally:
        sh("ip", "netns", "delete", ns, check=False)


def test_tftp_through_snat_works_only_with_the_helper() -> None:
    """The instance reads from an external TFTP server through the router's
    SNAT: the server's answer comes from a new port, which only the tftp
    helper (with its NAT side) lets back in."""
    need_root()
    fabric = Fabric()
    server = None
    r: dict[str, Any] = {}
    try:
        qr = interface("10.100.1.0/24", "10.100.1.1", "fa:16:3e:00:0a:01")
        gw = gateway("172.24.4.0/24", "172.24.4.10", "172.24.4.100", "fa:16:3e:00:ee:01")
        vm = fabric.host("vm", qr["network_id"], "10.100.1.11/24", "10.100.1.1",
                         "fa:16:3e:00:01:11")
        ext = fabric.host("ext", gw["network_id"], "172.24.4.100/24", None,
                          "fa:16:3e:00:ee:99")
        r = router([qr], gw)
        manager = RouterManager(fabric)
        assert manager.apply(r).error is None
        server = tftp.serve(ext)
        assert tftp.answered(vm, "172.24.4.100", same_port=True, tries=10)  # the path works
        assert not tftp.answered(vm, "172.24.4.100")
        r["_conntrack_helpers"] = [{"id": str(uuid.uuid4()), "helper": "tftp",
                                    "protocol": "udp", "port": 69, "router_id": r["id"]}]
        assert manager.apply(r).error is None
        assert tftp.answered(vm, "172.24.4.100")
        r["_conntrack_helpers"] = []
        assert manager.apply(r).error is None
        assert not tftp.answered(vm, "172.24.4.100")
    finally:
        if server is not None:
            server.kill()
            server.wait()
        if r and f"qrouter-{r['id']}" in namespaces():
            sh("ip", "netns", "delete", f"qrouter-{r['id']}", check=False)
        fabric.cleanup()
