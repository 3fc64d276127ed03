"""The pure decisions of distributed routers: each host's share of a router
(``agents/l3/dvr.py``) and br-tun's DVR flows (``agents/ovs/dvr.py``)."""
from __future__ import annotations

from typing import Any

from neutrino.agents.l3 import dvr
from neutrino.agents.ovs import dvr as ovs_dvr
from neutrino.agents.ovs import flows, plan
from neutrino.agents.ovs.switch import VifPort

RID = "7c3a9379-1d78-487d-ae7b-d9bdc9fc2a01"


def _port(pid: str, net: str, subnet: str, cidr: str, ip: str, mac: str,
          owner: str = "") -> dict[str, Any]:
    return {"id": pid, "network_id": net, "mac_address": mac, "mtu": 1450,
            "device_owner": owner,
            "fixed_ips": [{"subnet_id": subnet, "ip_address": ip, "prefixlen": 24}],
            "subnets": [{"id": subnet, "cidr": cidr, "gateway_ip": ip}]}


def router(**extra: Any) -> dict[str, Any]:
    gw = _port("gw-port", "ext", "ext-sub", "172.24.7.0/24", "172.24.7.10", "fa:16:3e:00:00:01")
    gw["subnets"][0]["gateway_ip"] = "172.24.7.1"
    return {"id": RID, "distributed": True, "gw_port": gw, "gw_port_host": "net-1",
            "enable_snat": True,
            "_interfaces": [
                _port("aaaa1111-0000", "net-a", "sub-a", "10.1.0.0/24", "10.1.0.1",
                      "fa:16:3e:aa:00:01"),
                _port("bbbb2222-0000", "net-b", "sub-b", "10.2.0.0/24", "10.2.0.1",
                      "fa:16:3e:bb:00:01")],
            "_snat_router_interfaces": [
                _port("cccc3333-0000", "net-a", "sub-a", "10.1.0.0/24", "10.1.0.5",
                      "fa:16:3e:cc:00:01")],
            "_arp_entries": [
                {"subnet_id": "sub-a", "ip_address": "10.1.0.5", "mac_address": "fa:16:3e:cc:00:01"},
                {"subnet_id": "sub-b", "ip_address": "10.2.0.9", "mac_address": "fa:16:3e:dd:00:01"},
                {"subnet_id": "elsewhere", "ip_address": "10.9.0.9", "mac_address": "fa:16:3e:ee:00:01"}],
            "_floatingips": [
                {"id": "fip-1", "floating_ip_address": "172.24.7.50",
                 "fixed_ip_address": "10.1.0.7", "host": "cmp-1", "status": "DOWN"},
                {"id": "fip-2", "floating_ip_address": "172.24.7.51",
                 "fixed_ip_address": "10.2.0.9", "host": "cmp-2", "status": "DOWN"}],
            "_floatingip_agent_interfaces": [
                {**_port("fg-port-0000", "ext", "ext-sub", "172.24.7.0/24", "172.24.7.20",
                         "fa:16:3e:ff:00:01"),
                 "subnets": [{"id": "ext-sub", "cidr": "172.24.7.0/24",
                              "gateway_ip": "172.24.7.1"}]}],
            **extra}


def test_a_compute_host_routes_between_the_subnets_without_the_gateway() -> None:
    share = dvr.desired(router(), "cmp-3", "dvr")
    local = share.local
    assert [d.name for d in local.devices] == ["qr-aaaa1111-00", "qr-bbbb2222-00"]
    assert local.gateway_device is None and not local.enable_snat and not local.floating_ips
    assert share.snat is None and share.distributed.fip is None
    # every other port of the subnets is a permanent neighbour on its qr- device
    assert [(n.device, n.ip_address) for n in share.distributed.neighbours] == [
        ("qr-aaaa1111-00", "10.1.0.5"), ("qr-bbbb2222-00", "10.2.0.9")]
    # what leaves subnet a goes to its SNAT port; subnet b has none
    [rule] = share.distributed.rules
    assert (rule.source, rule.table, rule.priority) == ("10.1.0.0/24", 167837697, 167837697)
    [route] = share.distributed.table_routes
    assert (route.table, route.nexthop, route.device) == (167837697, "10.1.0.5", "qr-aaaa1111-00")


def test_a_host_answers_only_its_own_floating_ips_through_its_fip_namespace() -> None:
    share = dvr.desired(router(), "cmp-1", "dvr")
    link = share.distributed.fip
    assert link is not None
    assert (link.rfp, link.fpr) == ("rfp-7c3a9379-1", "fpr-7c3a9379-1")
    assert link.floating_ips == ("172.24.7.50",)
    assert link.fip.namespace == "fip-ext" and link.fip.gateway.name == "fg-fg-port-000"
    assert [(r.destination, r.nexthop) for r in link.fip.routes] == [("default", "172.24.7.1")]
    rfp_ip, fpr_ip = dvr.pair_addresses(RID)
    assert (link.rfp_address, link.fpr_address) == (rfp_ip, fpr_ip)
    assert rfp_ip.startswith("169.254.") and int(fpr_ip.split(".")[-1]) % 2 == 1
    # the fixed address leaves by rfp-, NATed there as the legacy router's on qg-
    assert ("10.1.0.7/32", dvr.FIP_RT_TABLE, dvr.FIP_RULE_PRIORITY) in {
        (r.source, r.table, r.priority) for r in share.distributed.rules}
    assert share.local.gateway_device == link.rfp
    assert [f.id for f in share.local.floating_ips] == ["fip-1"]
    assert not share.local.enable_snat


def test_the_snat_namespace_is_built_on_the_snat_host_only() -> None:
    assert dvr.desired(router(), "net-1", "dvr").snat is None  # not a dvr_snat agent
    assert dvr.desired(router(), "net-2", "dvr_snat").snat is None  # not its SNAT host
    snat = dvr.desired(router(), "net-1", "dvr_snat").snat
    assert snat is not None and snat.namespace == f"snat-{RID}"
    assert [d.name for d in snat.devices] == ["sg-cccc3333-00", "qg-gw-port"]
    assert snat.enable_snat and snat.gateway_ips == ("172.24.7.10",)
    assert snat.snat_sources == ("10.1.0.0/24",) and not snat.floating_ips
    assert dvr.desired(router(gw_port=None), "net-1", "dvr_snat").snat is None


def test_br_tun_keeps_distributed_ports_on_their_host_and_rewrites_their_source() -> None:
    port = ovs_dvr.DvrPort(3, "fa:16:3e:aa:00:01", ("10.1.0.1",))
    got = {(f.table, f.priority, f.match): f.actions
           for f in ovs_dvr.process_flows([port], "fa:16:3f:00:00:07")}
    assert got[(1, 3, "arp,dl_vlan=3,arp_tpa=10.1.0.1")] == "drop"
    assert got[(1, 2, "dl_vlan=3,dl_dst=fa:16:3e:aa:00:01")] == "drop"
    assert got[(1, 1, "dl_vlan=3,dl_src=fa:16:3e:aa:00:01")] == (
        "mod_dl_src:fa:16:3f:00:00:07,resubmit(,2)")
    assert got[(1, 0, "")] == "resubmit(,2)"


def test_the_plan_adds_dvr_flows_for_wired_distributed_ports_once_the_mac_is_known() -> None:
    vif = VifPort("qr-aaaa1111-00", "qr-port", "fa:16:3e:aa:00:01", 5, None)
    details = {"device": "qr-port", "port_id": "qr-port", "network_id": "net-a",
               "network_type": "vxlan", "segmentation_id": 1001, "mac_address": vif.mac,
               "device_owner": ovs_dvr.INTERFACE_DISTRIBUTED,
               "fixed_ips": [{"subnet_id": "sub-a", "ip_address": "10.1.0.1"}]}
    observed = plan.Observed({"qr-port": vif}, full=True)
    base = plan.Settings(tunnel_types=("vxlan",), local_ip="10.0.0.1")
    without = plan.plan(base, plan.Known(), observed, plan.Answers([details]))
    tun = without.known.programmed["br-tun"]
    assert not [f for f in tun if f.table == ovs_dvr.DVR_PROCESS]
    with_mac = plan.plan(plan.Settings(tunnel_types=("vxlan",), local_ip="10.0.0.1",
                                       dvr_mac="fa:16:3f:00:00:07"),
                         plan.Known(), observed, plan.Answers([details]))
    tun = with_mac.known.programmed["br-tun"]
    assert flows.Flow(0, 1, "in_port=patch-int", "resubmit(,1)") in tun
    assert any(f.table == 1 and "mod_dl_src:fa:16:3f:00:00:07" in f.actions for f in tun)


def test_br_int_gives_frames_from_other_hosts_the_routers_mac_again() -> None:
    port = ovs_dvr.DvrPort(3, "fa:16:3e:aa:00:01", ("10.1.0.1",))
    got = {(f.table, f.priority, f.match): f.actions for f in ovs_dvr.integration_flows(
        [port], [(3, "fa:16:3e:00:00:99", "tap99"), (7, "fa:16:3e:00:00:98", "tap98")],
        ["fa:16:3f:00:00:08"], "patch-tun")}
    assert got[(0, 4, "in_port=patch-tun,dl_src=fa:16:3f:00:00:08")] == "resubmit(,1)"
    assert got[(1, 4, "dl_vlan=3,dl_dst=fa:16:3e:00:00:99")] == (
        "strip_vlan,mod_dl_src:fa:16:3e:aa:00:01,output:tap99")
    assert not [m for (_, _, m) in got if "fa:16:3e:00:00:98" in m]  # no router port there
    assert ovs_dvr.integration_flows([port], [], [], "patch-tun") == []
