"""The L3 agent's side of ``trace --live`` (``agents/l3/live_trace.py``): a
router's NAT table as ``nft -j`` lists it and a route lookup in, the
router's DNAT, route and SNAT for one packet out, each naming what
decided it."""
from __future__ import annotations

import json
from typing import Any

import pytest

from neutrino.agents.l3 import live_trace

# a router's table as the agent writes it with a floating IP, a port forwarding
# and SNAT, and ``nft -j list table ip neutrino_l3``'s answer for it (handles left out)
TABLE = """table ip neutrino_l3 {
  chain mangle_prerouting {
    type filter hook prerouting priority mangle; policy accept;
    iifname "qg-gw" meta mark set 0x2
  }
  chain prerouting {
    type nat hook prerouting priority dstnat; policy accept;
    ip daddr 172.30.0.20 tcp dport 80 dnat to 10.5.0.9:8080
    ip daddr 172.30.0.21 dnat to 10.5.0.9
  }
  chain postrouting {
    type nat hook postrouting priority srcnat; policy accept;
    rt ipsec exists accept
    ip saddr 10.5.0.9 oifname "qg-gw" snat to 172.30.0.21
    oifname "qg-gw" ip saddr { 10.5.0.0/24, 10.7.0.0/24 } snat to 172.30.0.5
    meta mark != 0x2 ct status dnat snat to 172.30.0.5
  }
}
"""
RULESET = json.loads("""{
 "nftables": [
  {
   "table": {
    "family": "ip",
    "name": "neutrino_l3"
   }
  },
  {
   "chain": {
    "family": "ip",
    "table": "neutrino_l3",
    "name": "mangle_prerouting",
    "type": "filter",
    "hook": "prerouting",
    "prio": -150,
    "policy": "accept"
   }
  },
  {
   "chain": {
    "family": "ip",
    "table": "neutrino_l3",
    "name": "prerouting",
    "type": "nat",
    "hook": "prerouting",
    "prio": -100,
    "policy": "accept"
   }
  },
  {
   "chain": {
    "family": "ip",
    "table": "neutrino_l3",
    "name": "postrouting",
    "type": "nat",
    "hook": "postrouting",
    "prio": 100,
    "policy": "accept"
   }
  },
  {
   "rule": {
    "family": "ip",
    "table": "neutrino_l3",
    "chain": "mangle_prerouting",
    "expr": [
     {
      "match": {
       "op": "==",
       "left": {
        "meta": {
         "key": "iifname"
        }
       },
       "right": "qg-gw"
      }
     },
     {
      "mangle": {
       "key": {
        "meta": {
         "key": "mark"
        }
       },
       "value": 2
      }
     }
    ]
   }
  },
  {
   "rule": {
    "family": "ip",
    "table": "neutrino_l3",
    "chain": "prerouting",
    "expr": [
     {
      "match": {
       "op": "==",
       "left": {
        "payload": {
         "protocol": "ip",
         "field": "daddr"
        }
       },
       "right": "172.30.0.20"
      }
     },
     {
      "match": {
       "op": "==",
       "left": {
        "payload": {
         "protocol": "tcp",
         "field": "dport"
        }
       },
       "right": 80
      }
     },
     {
      "dnat": {
       "addr": "10.5.0.9",
       "port": 8080
      }
     }
    ]
   }
  },
  {
   "rule": {
    "family": "ip",
    "table": "neutrino_l3",
    "chain": "prerouting",
    "expr": [
     {
      "match": {
       "op": "==",
       "left": {
        "payload": {
         "protocol": "ip",
         "field": "daddr"
        }
       },
       "right": "172.30.0.21"
      }
     },
     {
      "dnat": {
       "addr": "10.5.0.9"
      }
     }
    ]
   }
  },
  {
   "rule": {
    "family": "ip",
    "table": "neutrino_l3",
    "chain": "postrouting",
    "expr": [
     {
      "match": {
       "op": "==",
       "left": {
        "rt": {
         "key": "ipsec"
        }
       },
       "right": true
      }
     },
     {
      "accept": null
     }
    ]
   }
  },
  {
   "rule": {
    "family": "ip",
    "table": "neutrino_l3",
    "chain": "postrouting",
    "expr": [
     {
      "match": {
       "op": "==",
       "left": {
        "payload": {
         "protocol": "ip",
         "field": "saddr"
        }
       },
       "right": "10.5.0.9"
      }
     },
     {
      "match": {
       "op": "==",
       "left": {
        "meta": {
         "key": "oifname"
        }
       },
       "right": "qg-gw"
      }
     },
     {
      "snat": {
       "addr": "172.30.0.21"
      }
     }
    ]
   }
  },
  {
   "rule": {
    "family": "ip",
    "table": "neutrino_l3",
    "chain": "postrouting",
    "expr": [
     {
      "match": {
       "op": "==",
       "left": {
        "meta": {
         "key": "oifname"
        }
       },
       "right": "qg-gw"
      }
     },
     {
      "match": {
       "op": "==",
       "left": {
        "payload": {
         "protocol": "ip",
         "field": "saddr"
        }
       },
       "right": {
        "set": [
         {
          "prefix": {
           "addr": "10.5.0.0",
           "len": 24
          }
         },
         {
          "prefix": {
           "addr": "10.7.0.0",
           "len": 24
          }
         }
        ]
       }
      }
     },
     {
      "snat": {
       "addr": "172.30.0.5"
      }
     }
    ]
   }
  },
  {
   "rule": {
    "family": "ip",
    "table": "neutrino_l3",
    "chain": "postrouting",
    "expr": [
     {
      "match": {
       "op": "!=",
       "left": {
        "meta": {
         "key": "mark"
        }
       },
       "right": 2
      }
     },
     {
      "match": {
       "op": "in",
       "left": {
        "ct": {
         "key": "status"
        }
       },
       "right": "dnat"
      }
     },
     {
      "snat": {
       "addr": "172.30.0.5"
      }
     }
    ]
   }
  }
 ]
}""")
ROUTES = {"10.5.0.9": {"dev": "qr-in"}, "default": {"dev": "qg-gw", "gateway": "172.30.0.1"}}


def route(destination: str, source: str, iif: str) -> dict[str, Any]:
    if destination.startswith("10.5."):
        return ROUTES["10.5.0.9"]
    if destination.startswith("10."):
        raise LookupError("Network is unreachable")
    return ROUTES["default"]


def packet(src: str, dst: str, protocol: str = "icmp", dport: int | None = None
           ) -> dict[str, Any]:
    return {"nw_src": src, "nw_dst": dst, "protocol": protocol, "destination_port": dport}


def test_an_instance_leaving_by_the_gateway_is_snated_by_the_subnets_rule() -> None:
    answer = live_trace.decide(RULESET, route, packet("10.5.0.7", "8.8.8.8"), "qr-in")
    assert answer["verdict"] == "forwarded" and answer["device"] == "qg-gw"
    kinds = {h["kind"]: h for h in answer["hops"]}
    assert "translated_destination" not in kinds["dnat"]
    assert kinds["route"]["gateway"] == "172.30.0.1"
    assert kinds["snat"]["translated_source"] == "172.30.0.5"
    assert kinds["snat"]["rule"] == ('oifname qg-gw ip saddr { 10.5.0.0/24, 10.7.0.0/24 } '
                                     'snat to 172.30.0.5')


def test_a_floating_ip_s_port_leaves_as_its_floating_ip() -> None:
    answer = live_trace.decide(RULESET, route, packet("10.5.0.9", "8.8.8.8"), "qr-in")
    assert answer["source"] == "172.30.0.21"


def test_an_outside_packet_to_a_floating_ip_is_dnated_and_keeps_its_source() -> None:
    answer = live_trace.decide(RULESET, route, packet("198.51.100.7", "172.30.0.21"), "qg-gw")
    kinds = {h["kind"]: h for h in answer["hops"]}
    assert kinds["dnat"]["translated_destination"] == "10.5.0.9"
    assert kinds["route"]["device"] == "qr-in"
    # marked as come from outside: the hairpin SNAT does not apply
    assert "translated_source" not in kinds["snat"]
    assert answer["source"] == "198.51.100.7"


@pytest.mark.parametrize(("dport", "expected"), [(80, "10.5.0.9"), (22, None)])
def test_a_port_forwarding_matches_its_protocol_and_port_only(
        dport: int, expected: str | None) -> None:
    answer = live_trace.decide(RULESET, route, packet("198.51.100.7", "172.30.0.20", "tcp",
                                                      dport), "qg-gw")
    assert answer["hops"][0].get("translated_destination") == expected


def test_an_instance_reaching_a_floating_ip_is_hairpinned_through_the_gateway_ip() -> None:
    answer = live_trace.decide(RULESET, route, packet("10.7.0.4", "172.30.0.21"), "qr-in")
    assert answer["destination"] == "10.5.0.9" and answer["source"] == "172.30.0.5"


def test_no_route_is_a_drop_at_the_route_step() -> None:
    answer = live_trace.decide(RULESET, route, packet("10.5.0.7", "10.9.0.1"), "qr-in")
    assert answer["verdict"] == "dropped"
    assert answer["dropped_at"] == {"stage": "route", "detail": "Network is unreachable"}


def test_a_router_without_a_nat_table_translates_nothing() -> None:
    answer = live_trace.decide(None, route, packet("10.5.0.7", "8.8.8.8"), "qr-in")
    assert answer["source"] == "10.5.0.7" and answer["verdict"] == "forwarded"
