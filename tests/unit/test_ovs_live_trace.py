"""The OVS agent's side of ``trace --live`` (``agents/ovs/live_trace.py``):
where the packet enters br-int, the flow handed to ``ofproto/trace``, and
the tool's answer read as tables, verdict and the step that dropped it."""
from __future__ import annotations

import pytest

from neutrino.agents.ovs import live_trace
from neutrino.agents.ovs.flows import LocalNet

# ``ovs-appctl ofproto/trace br-int ... --ct-next trk,new`` on a fullstack host:
# an instance's ping leaving through its egress rules, br-tun and a VXLAN tunnel
# (the flows' summaries and the tunnel header left out)
FORWARDED = """

bridge("br-int")
----------------
 0. priority 0, cookie 0x3c0cfe4adb409efb
    resubmit(,60)
60. in_port=3, priority 100, cookie 0x3c0cfe4adb409efb
    load:0x1->NXM_NX_REG6[]
    resubmit(,71)
71. ip,in_port=3,dl_src=fa:16:3e:39:07:ed,nw_src=10.130.1.199, priority 90, cookie 0x3c0cfe4adb409efb
    ct(table=72,zone=3)
    drop
     -> A clone of the packet is forked to recirculate. The forked pipeline will be resumed at table 72.
     -> Sets the packet to an untracked state, and clears all the conntrack fields.

Datapath actions: ct(zone=3),recirc(0x1)

===============================================================================
recirc(0x1) - resume conntrack with ct_state=new|trk
===============================================================================


bridge("br-int")
----------------
    thaw
        Resuming from table 72
72. ct_state=+new-est-inv+trk,ip,in_port=3, priority 70, cookie 0x3c0cfe4adb409efb
    ct(commit,zone=3)
    drop
     -> Sets the packet to an untracked state, and clears all the conntrack fields.
    resubmit(,73)
73. priority 0, cookie 0x3c0cfe4adb409efb
    NORMAL
     -> forwarding to learned port

bridge("br-tun")
----------------
 0. in_port=1, priority 1, cookie 0x3c0cfe4adb409efb
    resubmit(,2)
 2. dl_dst=00:00:00:00:00:00/01:00:00:00:00:00, priority 0, cookie 0x3c0cfe4adb409efb
    resubmit(,20)
20. vlan_tci=0x0001/0x0fff,dl_dst=fa:16:3e:03:4a:6f, priority 1
    load:0->NXM_OF_VLAN_TCI[]
    load:0x43d->NXM_NX_TUN_ID[]
    output:2
     -> output to native tunnel
     -> tunneling to 10.99.0.3 via ffaa2ul
     -> tunneling from 02:00:0a:63:00:01 10.99.0.1 to 02:00:0a:63:00:03 10.99.0.3

bridge("ffaa2ul")
-----------------
 0. priority 0
    NORMAL
     -> forwarding to learned port

Datapath actions: ct(commit,zone=3),tnl_push(tnl_port(6),header(size=50,type=4),out_port(1)),2
"""
# the same packet once the egress rule's flow (table 72, priority 70) is deleted
DROPPED = FORWARDED.split("72. ct_state")[0] + """72. priority 0, cookie 0x3c0cfe4adb409efb
    drop

Final flow: unchanged
Datapath actions: drop
"""
PACKET = {"direction": "egress", "port_id": "p-a", "network_id": "n-1",
          "dl_src": "fa:16:3e:39:07:ed", "dl_dst": "fa:16:3e:03:4a:6f",
          "nw_src": "10.130.1.199", "nw_dst": "10.130.1.167", "protocol": "tcp",
          "destination_port": 5001}
NETS = {"n-1": LocalNet("n-1", "vxlan", 1085, None, 1),
        "n-2": LocalNet("n-2", "vlan", 200, "physnet1", 2),
        "n-3": LocalNet("n-3", "flat", None, "physnet1", 3)}


def test_a_forwarded_packet_lists_every_table_across_bridges() -> None:
    answer = live_trace.hops(FORWARDED)
    assert answer["verdict"] == "forwarded"
    assert [(t["bridge"], t["table"]) for t in answer["tables"]] == [
        ("br-int", 0), ("br-int", 60), ("br-int", 71), ("br-int", 72), ("br-int", 73),
        ("br-tun", 0), ("br-tun", 2), ("br-tun", 20), ("ffaa2ul", 0)]
    egress = answer["tables"][3]
    assert egress["flow"] == "ct_state=+new-est-inv+trk,ip,in_port=3, priority 70"
    assert egress["actions"][0] == "ct(commit,zone=3)"
    assert answer["datapath_actions"].startswith("ct(commit,zone=3),tnl_push")
    assert "dropped_at" not in answer


def test_a_dropped_packet_names_the_table_its_flow_and_the_step() -> None:
    answer = live_trace.hops(DROPPED)
    assert answer["verdict"] == "dropped"
    assert answer["dropped_at"] == {"bridge": "br-int", "table": 72,
                                    "flow": "any packet, priority 0",
                                    "stage": "security_group_egress"}


# an ingress packet traced from br-tun's tunnel port: after conntrack, the
# tool heads the resumed pipeline with the bridge it started on
FROM_TUNNEL = """
bridge("br-tun")
----------------
 0. in_port=2, priority 1, cookie 0x1
    resubmit(,4)
 4. tun_id=0x40f, priority 1, cookie 0x1
    mod_vlan_vid:2
    resubmit(,10)
10. priority 1, cookie 0x1
    learn(table=20,hard_timeout=300,priority=1,NXM_OF_VLAN_TCI[0..11])
     >> suppressing side effects, so learn action ignored
    output:1

bridge("br-int")
----------------
 0. priority 0, cookie 0x1
    resubmit(,60)
60. dl_vlan=2,dl_dst=fa:16:3e:cf:d7:59, priority 90, cookie 0x1
    strip_vlan
    load:0x6->NXM_NX_REG5[]
    resubmit(,81)
81. ip,reg5=0x6, priority 80, cookie 0x1
    ct(table=82,zone=6)
    drop
     -> A clone of the packet is forked to recirculate. The forked pipeline will be resumed at table 82.

Final flow: unchanged
Megaflow: recirc_id=0,eth,icmp,in_port=2,nw_frag=no
Datapath actions: ct(zone=6),recirc(0x3)

===============================================================================
recirc(0x3) - resume conntrack with ct_state=new|trk
===============================================================================

Flow: recirc_id=0x3,ct_state=new|trk,ct_zone=6,eth,icmp,reg5=0x6,in_port=1

bridge("br-tun")
----------------
    thaw
        Resuming from table 82
82. priority 0, cookie 0x1
    drop

Final flow: unchanged
Megaflow: recirc_id=0x3,ct_state=+new-est-rel-inv+trk,eth,icmp,in_port=1,nw_frag=no
Datapath actions: drop
"""


def test_a_resumed_pipeline_stays_on_the_bridge_that_sent_it_to_conntrack() -> None:
    answer = live_trace.hops(FROM_TUNNEL)
    assert [(t["bridge"], t["table"]) for t in answer["tables"]] == [
        ("br-tun", 0), ("br-tun", 4), ("br-tun", 10), ("br-int", 0), ("br-int", 60),
        ("br-int", 81), ("br-int", 82)]
    assert answer["tables"][2]["actions"] == [
        "learn(table=20,hard_timeout=300,priority=1,NXM_OF_VLAN_TCI[0..11])", "output:1"]
    assert answer["dropped_at"]["stage"] == "security_group_ingress"


def test_a_table_without_a_matching_flow_is_a_drop_there() -> None:
    text = 'bridge("br-int")\n----------------\n 0. No match.\n    drop\n\nDatapath actions: drop\n'
    answer = live_trace.hops(text)
    assert answer["dropped_at"]["table"] == 0
    assert answer["dropped_at"]["flow"] == "no flow matches"
    assert answer["dropped_at"]["stage"] == "switching"


def test_an_egress_packet_enters_at_the_sender_s_own_port() -> None:
    where = live_trace.entry(PACKET, {"p-a": "tapa"}, NETS, {}, "patch-tun")
    assert where == live_trace.Entry("tapa")
    assert live_trace.flow_spec(PACKET, where) == (
        "in_port=tapa,dl_src=fa:16:3e:39:07:ed,dl_dst=fa:16:3e:03:4a:6f,tcp,"
        "nw_src=10.130.1.199,nw_dst=10.130.1.167,tp_src=40000,tp_dst=5001")


def test_an_egress_packet_of_a_port_not_on_this_host_is_refused() -> None:
    with pytest.raises(live_trace.TraceError, match="not wired"):
        live_trace.entry(PACKET, {}, NETS, {}, "patch-tun")


@pytest.mark.parametrize(("network", "expected"), [
    ("n-1", live_trace.Entry("patch-tun", 1)),
    ("n-2", live_trace.Entry("int-br-phys", 200)),
    ("n-3", live_trace.Entry("int-br-phys", None)),
])
def test_an_ingress_packet_from_another_host_enters_by_its_network_s_uplink(
        network: str, expected: live_trace.Entry) -> None:
    packet = {**PACKET, "direction": "ingress", "network_id": network,
              "from_port_id": "elsewhere"}
    assert live_trace.entry(packet, {}, NETS, {"physnet1": "br-phys"}, "patch-tun") == expected


def test_an_ingress_packet_from_a_known_tunnel_enters_the_tunnel_bridge_with_its_vni() -> None:
    packet = {**PACKET, "direction": "ingress", "from_port_id": "elsewhere",
              "from_tunnel_ip": "10.99.0.1"}
    tunnels = {"vxlan-0a630001": "vxlan"}
    where = live_trace.entry(packet, {}, NETS, {}, "patch-tun", tunnels, "br-tun")
    assert where == live_trace.Entry("vxlan-0a630001", bridge="br-tun", tun_id=1085)
    assert live_trace.flow_spec(packet, where).startswith("in_port=vxlan-0a630001,tun_id=0x43d,")
    # no tunnel to that host here: from br-int's patch, as without the address
    assert live_trace.entry(packet, {}, NETS, {}, "patch-tun", {}, "br-tun") == (
        live_trace.Entry("patch-tun", 1))


def test_an_ingress_packet_from_a_local_sender_enters_at_the_sender_s_port() -> None:
    packet = {**PACKET, "direction": "ingress", "from_port_id": "qr"}
    assert live_trace.entry(packet, {"qr": "qr-1"}, NETS, {}, "patch-tun").port == "qr-1"


def test_a_ping_is_an_echo_request_and_ipv6_uses_its_fields() -> None:
    ping = {**PACKET, "protocol": "ipv6-icmp", "nw_src": "2001:db8::1", "nw_dst": "2001:db8::2"}
    spec = live_trace.flow_spec(ping, live_trace.Entry("tapa", 5))
    assert spec.startswith("in_port=tapa,dl_vlan=5,")
    assert "icmp6,icmp_type=128,icmp_code=0,ipv6_src=2001:db8::1,ipv6_dst=2001:db8::2" in spec
