"""A router's IPsec site connections as strongSwan configuration, and what
to report of them (pure: the server's view in, text and statuses out).

One charon per router runs them (``charon.py``); its ``strongswan.conf``
says where its sockets are and how SAs are installed (the kernel's XFRM, or
``kernel-libipsec``: userspace ESP over a TUN device, UDP-encapsulated, for
kernels without ESP); its ``swanctl.conf`` holds one connection per site
connection (named by the connection's id, so the SAs charon lists map back
to it) and the pre-shared keys. Upstream's algorithm names become
strongSwan's proposal keywords (``aes-128`` -> ``aes128``, ``group14`` ->
``modp2048``); a connection whose ``admin_state_up`` is false is left out.
"""
from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

ACTIVE, DOWN = "ACTIVE", "DOWN"

DH_GROUPS = {
    "group2": "modp1024", "group5": "modp1536", "group14": "modp2048",
    "group15": "modp3072", "group16": "modp4096", "group17": "modp6144",
    "group18": "modp8192", "group19": "ecp256", "group20": "ecp384", "group21": "ecp521",
    "group22": "modp1024s160", "group23": "modp2048s224", "group24": "modp2048s256",
    "group25": "ecp192", "group26": "ecp224", "group27": "ecp224bp", "group28": "ecp256bp",
    "group29": "ecp384bp", "group30": "ecp512bp", "group31": "curve25519",
}
INTEGRITY = {"sha1": "sha1", "sha256": "sha256", "sha384": "sha384", "sha512": "sha512",
             "aes-xcbc": "aesxcbc", "aes-cmac": "aescmac"}
# upstream's dpd actions -> swanctl's (``hold`` keeps a trap for the traffic)
DPD_ACTIONS = {"hold": "trap", "clear": "clear", "restart": "restart",
               "restart-by-peer": "restart", "disabled": "clear"}


@dataclass(frozen=True)
class CharonFiles:
    strongswan_conf: str
    swanctl_conf: str


def cipher(name: str) -> str:
    """``aes-128`` -> ``aes128``, ``aes-256-gcm-16`` -> ``aes256gcm16``,
    ``aes-128-ctr`` -> ``aes128ctr``, ``3des`` -> ``3des``."""
    return name.replace("-", "")


def _aead(encryption: str) -> bool:
    return "-gcm-" in encryption or "-ccm-" in encryption


def ike_proposal(policy: dict[str, Any]) -> str:
    enc, integ = policy["encryption_algorithm"], INTEGRITY[policy["auth_algorithm"]]
    dh = DH_GROUPS[policy["pfs"]]
    if _aead(enc):  # an AEAD cipher protects integrity itself; IKE still needs a PRF
        return f"{cipher(enc)}-prf{integ}-{dh}"
    return f"{cipher(enc)}-{integ}-{dh}"


def child_proposal(policy: dict[str, Any]) -> str:
    enc, integ = policy["encryption_algorithm"], INTEGRITY[policy["auth_algorithm"]]
    dh = DH_GROUPS[policy["pfs"]]
    if policy.get("transform_protocol") == "ah":
        return f"{integ}-{dh}"
    if _aead(enc):
        return f"{cipher(enc)}-{dh}"
    return f"{cipher(enc)}-{integ}-{dh}"


def strongswan_conf(base: str, backend: str, detailed: bool = False) -> str:
    """charon's own settings: its plugins, its VICI socket in ``base``, its log."""
    kernel = "kernel-libipsec kernel-netlink" if backend == "libipsec" else "kernel-netlink"
    level = 2 if detailed else 1
    return (
        "charon {\n"
        f"  load = random nonce aes des sha1 sha2 md5 hmac gcm xcbc cmac ctr ccm kdf openssl "
        f"pem pkcs1 x509 pubkey {kernel} socket-default vici updown\n"
        "  install_routes = yes\n"
        "  install_virtual_ip = no\n"
        "  plugins {\n"
        f"    vici {{\n      socket = unix://{base}/charon.vici\n    }}\n"
        "  }\n"
        "  filelog {\n"
        f"    charon {{\n      path = {base}/charon.log\n      default = {level}\n"
        "      time_format = %b %e %T\n    }\n"
        "  }\n"
        "}\n")


def _quote(text: str) -> str:
    """A swanctl value taken literally (identities may hold spaces or @)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _connection(conn: dict[str, Any]) -> list[str]:
    ike, ipsec, dpd = conn["ikepolicy"], conn["ipsecpolicy"], conn["dpd"]
    name = conn["id"]
    local_id = conn.get("local_id") or conn["external_ip"]
    proposals = "ah_proposals" if ipsec.get("transform_protocol") == "ah" else "esp_proposals"
    start = "start" if conn["initiator"] == "bi-directional" else "none"
    lines = [
        f"  {name} {{",
        f"    version = {1 if ike['ike_version'] == 'v1' else 2}",
        f"    local_addrs = {conn['external_ip']}",
        f"    remote_addrs = {conn['peer_address']}",
        f"    proposals = {ike_proposal(ike)}",
        f"    rekey_time = {int(ike['lifetime']['value'])}s",
        "    encap = yes" if conn.get("encap") else "",
        f"    aggressive = {'yes' if ike['phase1_negotiation_mode'] == 'aggressive' else 'no'}",
        f"    dpd_delay = {0 if dpd['action'] == 'disabled' else int(dpd['interval'])}s",
        f"    dpd_timeout = {int(dpd['timeout'])}s",
        "    keyingtries = 0",
        f"    local {{\n      auth = psk\n      id = {_quote(local_id)}\n    }}",
        f"    remote {{\n      auth = psk\n      id = {_quote(conn['peer_id'])}\n    }}",
        "    children {",
        f"      {name} {{",
        f"        local_ts = {','.join(conn['local_cidrs'])}",
        f"        remote_ts = {','.join(conn['peer_cidrs'])}",
        f"        {proposals} = {child_proposal(ipsec)}",
        f"        mode = {ipsec['encapsulation_mode']}",
        f"        life_time = {int(ipsec['lifetime']['value'])}s",
        f"        rekey_time = {max(1, int(ipsec['lifetime']['value']) * 9 // 10)}s",
        f"        start_action = {start}",
        f"        dpd_action = {DPD_ACTIONS[dpd['action']]}",
        f"        close_action = {'start' if start == 'start' else 'none'}",
        "      }",
        "    }",
        "  }",
    ]
    return [line for line in lines if line]


def swanctl_conf(service: dict[str, Any], encap: bool = False) -> str:
    """The connections and secrets of a VPN service's enabled connections;
    ``encap``: force UDP encapsulation (what kernel-libipsec needs)."""
    conns = [dict(c, encap=encap) for c in service["ipsec_site_connections"]
             if c["admin_state_up"]]
    out = ["connections {"]
    for conn in conns:
        out.extend(_connection(conn))
    out.append("}")
    out.append("secrets {")
    for conn in conns:
        secret = base64.b64encode(conn["psk"].encode()).decode()
        local_id = conn.get("local_id") or conn["external_ip"]
        out.append(f"  ike-{conn['id']} {{\n    id-1 = {_quote(local_id)}\n"
                   f"    id-2 = {_quote(conn['peer_id'])}\n    secret = 0s{secret}\n  }}")
    out.append("}")
    return "\n".join(out) + "\n"


def files(service: dict[str, Any], base: str, backend: str,
          detailed: bool = False) -> CharonFiles:
    return CharonFiles(strongswan_conf(base, backend, detailed),
                       swanctl_conf(service, encap=backend == "libipsec"))


def wanted(service: dict[str, Any]) -> bool:
    """Whether a charon should run: the service is up with a connection up."""
    return bool(service["admin_state_up"]) and any(
        c["admin_state_up"] for c in service["ipsec_site_connections"])


def statuses(service: dict[str, Any], running: bool,
             installed: set[str]) -> dict[str, Any]:
    """What the service and its connections are, as upstream's driver says:
    the service ACTIVE while its charon runs, a connection ACTIVE while it
    has an installed CHILD_SA (``installed``: connection ids), else DOWN."""
    up = running and bool(service["admin_state_up"])
    return {
        "id": service["id"], "status": ACTIVE if up else DOWN,
        "updated_pending_status": True,
        "ipsec_site_connections": {
            c["id"]: {"status": ACTIVE if up and c["admin_state_up"] and c["id"] in installed
                      else DOWN, "updated_pending_status": True}
            for c in service["ipsec_site_connections"]}}


def changed(service: dict[str, Any], report: dict[str, Any]) -> bool:
    """Whether ``report`` says something the server does not show yet."""
    if service["status"] != report["status"]:
        return True
    shown = {c["id"]: c["status"] for c in service["ipsec_site_connections"]}
    return any(shown.get(cid) != s["status"]
               for cid, s in report["ipsec_site_connections"].items())
