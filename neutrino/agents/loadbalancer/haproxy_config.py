"""A load balancer's graph as haproxy's configuration text (pure).

The layout follows Octavia's amphora, so that its statistics read the same:
one ``frontend`` per listener, named by the listener's id; one ``backend``
per pool and listener using it, named ``<pool id>:<listener id>`` (a pool
shared by two listeners gets a backend in each, so each listener's
counters stay its own); one ``server`` per member, named by its id. Objects
being deleted (PENDING_DELETE) and listeners or pools that are
administratively down are left out, so that applying the text is what
finishes their change.

UDP listeners and their pools are not haproxy's: nftables carries them
(``nft_udp``), so they are left out here. What neither can do (SCTP, the
``SOURCE_IP_PORT`` algorithm on TCP pools: ``resources.lb_haproxy.unsupported``)
is refused by the provider before the API writes anything; the renderer
assumes a graph that passed it.
"""
from __future__ import annotations

import dataclasses
import re

from neutrino.resources.lb_graph import (
    PENDING_DELETE,
    HealthMonitor,
    L7Policy,
    L7Rule,
    Listener,
    LoadBalancer,
    Member,
    Pool,
)
from neutrino.resources.lb_haproxy import ALGORITHMS, HTTP_MODES, by_nftables, live

# haproxy's match methods for L7 rules' compare types
MATCH = {"EQUAL_TO": "str", "STARTS_WITH": "beg", "ENDS_WITH": "end",
         "CONTAINS": "sub", "REGEX": "reg"}
DEFAULT_MAXCONN = 50000
DEFAULT_REDIRECT_CODE = 302
# client certificate headers of a TERMINATED_HTTPS listener, as Octavia inserts them
SSL_CLIENT_HEADERS = {
    "X-SSL-Client-Verify": "%[ssl_c_verify]",
    "X-SSL-Client-Has-Cert": "%[ssl_c_used]",
    "X-SSL-Client-DN": "%{+Q}[ssl_c_s_dn]",
    "X-SSL-Client-CN": "%{+Q}[ssl_c_s_dn(cn)]",
    "X-SSL-Issuer": "%{+Q}[ssl_c_i_dn]",
    "X-SSL-Client-SHA1": "%{+Q}[ssl_c_sha1,hex]",
    "X-SSL-Client-Not-Before": "%{+Q}[ssl_c_notbefore]",
    "X-SSL-Client-Not-After": "%{+Q}[ssl_c_notafter]",
}


@dataclasses.dataclass(frozen=True)
class Files:
    """Where the text points: the stats socket, the ping script, and each
    TLS listener's certificate files (written by the agent beside it)."""

    stats_socket: str
    ping_script: str
    certs_dir: str

    def listener_file(self, listener_id: str, name: str) -> str:
        """A TLS listener's file: ``default.pem`` (its certificate, key and
        chain), ``sni`` (a directory of more), ``client_ca.pem``, ``client_crl.pem``."""
        return f"{self.certs_dir}/{listener_id}/{name}"

    def pool_file(self, pool_id: str, key: str) -> str:
        """A TLS pool's ``client`` certificate (with its key) presented to its
        members, the ``ca`` it verifies them against, that CA's ``crl``."""
        return f"{self.certs_dir}/pools/{pool_id}/{key}.pem"


def render(lb: LoadBalancer, files: Files) -> str:
    """The whole configuration of ``lb``'s haproxy."""
    # a load balancer that is down keeps its namespace and answers nothing
    listeners = [x for x in live(lb.listeners) if x.admin_state_up and lb.admin_state_up
                 and not by_nftables(x.protocol)]
    pools = {p.id: p for p in live(lb.pools) if p.admin_state_up and not by_nftables(p.protocol)}
    ping = any(p.healthmonitor is not None and p.healthmonitor.type == "PING"
               and p.healthmonitor.provisioning_status != PENDING_DELETE
               for p in pools.values())
    out = _global(files, ping)
    for listener in listeners:
        out += _frontend(lb, listener, pools, files)
        for pool in _backend_pools(listener, pools):
            out += _backend(listener, pool, files)
    return "\n".join(out) + "\n"


def backend_name(pool_id: str, listener_id: str) -> str:
    return f"{pool_id}:{listener_id}"


def _global(files: Files, ping: bool) -> list[str]:
    # No global maxconn: haproxy derives it from the file limit it runs under
    # (an explicit one beyond that limit stops it); each frontend has its own.
    out = ["global",
           "    master-worker",
           f"    stats socket {files.stats_socket} mode 0600 level admin expose-fd listeners",
           "    stats timeout 30s"]
    if ping:  # haproxy forks the ping script for PING monitors
        out += ["    external-check", "    insecure-fork-wanted"]
    out += ["", "defaults",
            "    retries 3",
            "    option redispatch",
            "    timeout connect 5s",
            "    timeout client 50s",
            "    timeout server 50s",
            ""]
    return out


def _maxconn(listener: Listener) -> int:
    limit = listener.connection_limit
    return limit if limit and limit > 0 else DEFAULT_MAXCONN


def _mode(protocol: str) -> str:
    return "http" if protocol in HTTP_MODES else "tcp"


def _backend_pools(listener: Listener, pools: dict[str, Pool]) -> list[Pool]:
    """The pools the listener sends to: its default pool and its L7 policies' pools."""
    ids = [listener.default_pool_id] if listener.default_pool_id else []
    ids += [p.redirect_pool_id for p in _policies(listener)
            if p.action == "REDIRECT_TO_POOL" and p.redirect_pool_id]
    return [pools[i] for i in dict.fromkeys(ids) if i in pools]


def _frontend(lb: LoadBalancer, listener: Listener, pools: dict[str, Pool],
              files: Files) -> list[str]:
    mode = _mode(listener.protocol)
    out = [f"frontend {listener.id}",
           f"    maxconn {_maxconn(listener)}",
           *(f"    bind {_address(a)}:{listener.protocol_port}{_bind_tls(listener, files)}"
             for a in _vip_addresses(lb)),
           f"    mode {mode}",
           f"    timeout client {listener.timeout_client_data}"]
    if listener.allowed_cidrs:
        out += [f"    acl allowed-cidrs src {' '.join(listener.allowed_cidrs)}",
                "    tcp-request connection reject unless allowed-cidrs"]
    if mode == "tcp" and listener.timeout_tcp_inspect:
        out.append(f"    tcp-request inspect-delay {listener.timeout_tcp_inspect}")
    if listener.protocol == "PROMETHEUS":
        out += ["    http-request use-service prometheus-exporter", ""]
        return out
    if mode == "http":
        out += _l7(listener, pools)
        if listener.protocol == "TERMINATED_HTTPS" and listener.hsts_max_age is not None:
            value = f"max-age={listener.hsts_max_age};"
            value += " includeSubDomains;" if listener.hsts_include_subdomains else ""
            value += " preload;" if listener.hsts_preload else ""
            out.append(f'    http-response set-header Strict-Transport-Security "{value}"')
    if listener.default_pool_id in pools:
        out.append(f"    default_backend {backend_name(listener.default_pool_id, listener.id)}")
    out.append("")
    return out


def _vip_addresses(lb: LoadBalancer) -> list[str]:
    """The VIP and its additional addresses (more fixed IPs of the VIP port)."""
    extra = [v.get("ip_address") for v in lb.additional_vips]
    return list(dict.fromkeys([lb.vip.address, *(a for a in extra if a)]))


def _address(address: str) -> str:
    return f"[{address}]" if ":" in address else address


def _bind_tls(listener: Listener, files: Files) -> str:
    if listener.protocol != "TERMINATED_HTTPS":
        return ""
    out = f" ssl crt {files.listener_file(listener.id, 'default.pem')}"
    if listener.sni_container_refs:
        out += f" crt {files.listener_file(listener.id, 'sni')}"
    if listener.client_authentication in ("OPTIONAL", "MANDATORY") and (
            listener.client_ca_tls_container_ref):
        verify = "required" if listener.client_authentication == "MANDATORY" else "optional"
        out += f" verify {verify} ca-file {files.listener_file(listener.id, 'client_ca.pem')}"
        if listener.client_crl_container_ref:
            out += f" crl-file {files.listener_file(listener.id, 'client_crl.pem')}"
    return out + _tls_options(listener.tls_ciphers, listener.tls_versions,
                              listener.alpn_protocols)


def _tls_options(ciphers: str | None, versions: tuple[str, ...] | None,
                 alpn: tuple[str, ...] | None) -> str:
    """What a listener and a pool both say of their TLS: ciphers, the range
    of versions, ALPN protocols."""
    out = f" ciphers {ciphers}" if ciphers else ""
    if versions:
        low, high = _tls_range(versions)
        out += f" ssl-min-ver {low} ssl-max-ver {high}"
    if alpn:
        out += f" alpn {','.join(alpn)}"
    return out


_TLS_ORDER = ("SSLv3", "TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3")
_TLS_NAMES = {"SSLv3": "SSLv3", "TLSv1": "TLSv1.0", "TLSv1.1": "TLSv1.1",
              "TLSv1.2": "TLSv1.2", "TLSv1.3": "TLSv1.3"}


def _tls_range(versions: tuple[str, ...]) -> tuple[str, str]:
    known = sorted((v for v in versions if v in _TLS_NAMES), key=_TLS_ORDER.index)
    if not known:
        return "TLSv1.2", "TLSv1.3"
    return _TLS_NAMES[known[0]], _TLS_NAMES[known[-1]]


# -- L7 policies ------------------------------------------------------------------------


def _policies(listener: Listener) -> list[L7Policy]:
    """The policies that act: up, not being deleted, with at least one live rule
    (a policy without rules matches nothing, as in Octavia), by position."""
    out = [p for p in live(listener.l7policies)
           if p.admin_state_up and _rules(p)]
    return sorted(out, key=lambda p: p.position)


def _rules(policy: L7Policy) -> list[L7Rule]:
    return [r for r in live(policy.rules) if r.admin_state_up]


def _acl_name(rule: L7Rule) -> str:
    return f"rule_{rule.id}"


def _quote(value: str) -> str:
    """An ACL pattern as one haproxy word (spaces and quotes kept)."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def acl(rule: L7Rule) -> str:
    """The ACL matching ``rule`` (its invert is applied where the ACL is used)."""
    match = MATCH.get(rule.compare_type, "str")
    value = _quote(rule.value)
    if rule.type == "HOST_NAME":
        fetch = "req.hdr(host),field(1,:)"
        return f"acl {_acl_name(rule)} {fetch} -i -m {match} {value}"
    if rule.type == "PATH":
        return f"acl {_acl_name(rule)} path -m {match} {value}"
    if rule.type == "FILE_TYPE":
        if rule.compare_type == "REGEX":
            return f"acl {_acl_name(rule)} path_reg {value}"
        return f"acl {_acl_name(rule)} path_end -m str {_quote('.' + rule.value.lstrip('.'))}"
    if rule.type == "HEADER":
        return f"acl {_acl_name(rule)} req.hdr({rule.key}) -m {match} {value}"
    if rule.type == "COOKIE":
        return f"acl {_acl_name(rule)} req.cook({rule.key}) -m {match} {value}"
    if rule.type == "SSL_CONN_HAS_CERT":
        return f"acl {_acl_name(rule)} ssl_c_used"
    if rule.type == "SSL_VERIFY_RESULT":
        return f"acl {_acl_name(rule)} ssl_c_verify eq {int(rule.value)}"
    if rule.type == "SSL_DN_FIELD":
        return f"acl {_acl_name(rule)} ssl_c_s_dn({rule.key}) -m {match} {value}"
    raise ValueError(f"L7 rule type {rule.type}")


def _condition(policy: L7Policy) -> str:
    """All of the policy's rules must match (each negated when inverted)."""
    return " ".join(("!" if r.invert else "") + _acl_name(r) for r in _rules(policy))


def _l7(listener: Listener, pools: dict[str, Pool]) -> list[str]:
    """ACLs, then rejections and redirects (haproxy's request rules, in policy
    order), then the pool switches (evaluated after every request rule)."""
    policies = _policies(listener)
    out = [f"    {acl(r)}" for p in policies for r in _rules(p)]
    for policy in policies:
        cond = _condition(policy)
        code = policy.redirect_http_code or DEFAULT_REDIRECT_CODE
        if policy.action == "REJECT":
            out.append(f"    http-request deny deny_status 403 if {cond}")
        elif policy.action == "REDIRECT_TO_URL" and policy.redirect_url:
            out.append(f"    http-request redirect location {policy.redirect_url} "
                       f"code {code} if {cond}")
        elif policy.action == "REDIRECT_PREFIX" and policy.redirect_prefix:
            out.append(f"    http-request redirect prefix {policy.redirect_prefix} "
                       f"code {code} if {cond}")
    for policy in policies:
        if policy.action == "REDIRECT_TO_POOL" and policy.redirect_pool_id in pools:
            out.append(f"    use_backend {backend_name(policy.redirect_pool_id, listener.id)}"
                       f" if {_condition(policy)}")
    return out


# -- backends ---------------------------------------------------------------------------


def _backend(listener: Listener, pool: Pool, files: Files) -> list[str]:
    mode = _mode(listener.protocol)
    out = [f"backend {backend_name(pool.id, listener.id)}",
           f"    mode {mode}",
           f"    balance {ALGORITHMS[pool.lb_algorithm]}",
           f"    fullconn {_maxconn(listener)}",
           "    option allbackups",
           f"    timeout connect {listener.timeout_member_connect}",
           f"    timeout server {listener.timeout_member_data}"]
    out += _persistence(pool, mode)
    if mode == "http":
        out += _inserted_headers(listener)
    hm = _monitor(pool)
    if hm is not None:
        out += _checks(hm, files)
    for member in live(pool.members):
        out.append("    " + _server(member, pool, hm, mode, files))
    out.append("")
    return out


def _persistence(pool: Pool, mode: str) -> list[str]:
    sp = pool.session_persistence or {}
    kind = sp.get("type")
    if kind == "SOURCE_IP":
        expire = sp.get("persistence_timeout")
        tail = f" expire {int(expire)}s" if expire else ""
        return [f"    stick-table type ip size 10k{tail}", "    stick on src"]
    if kind == "HTTP_COOKIE" and mode == "http":
        return ["    cookie SRV insert indirect nocache"]
    if kind == "APP_COOKIE" and mode == "http" and sp.get("cookie_name"):
        name = sp["cookie_name"]
        return ["    stick-table type string len 64 size 10k",
                f"    stick store-response res.cook({name})",
                f"    stick match req.cook({name})"]
    return []


def _inserted_headers(listener: Listener) -> list[str]:
    headers = {k: str(v).lower() == "true" for k, v in (listener.insert_headers or {}).items()}
    out = []
    if headers.get("X-Forwarded-For"):
        out.append("    option forwardfor")
    if headers.get("X-Forwarded-Port"):
        out.append("    http-request set-header X-Forwarded-Port %[dst_port]")
    if headers.get("X-Forwarded-Proto"):
        proto = "https" if listener.protocol == "TERMINATED_HTTPS" else "http"
        out.append(f"    http-request set-header X-Forwarded-Proto {proto}")
    if listener.protocol == "TERMINATED_HTTPS":
        for name, fetch in SSL_CLIENT_HEADERS.items():
            if headers.get(name):
                out.append(f"    http-request set-header {name} {fetch}")
    return out


def _monitor(pool: Pool) -> HealthMonitor | None:
    hm = pool.healthmonitor
    if hm is None or hm.provisioning_status == PENDING_DELETE or not hm.admin_state_up:
        return None
    return hm


def expected_statuses(codes: str | None) -> str:
    """``expected_codes`` (``200``, ``200,202``, ``200-204``) as haproxy's
    ``http-check expect``."""
    codes = (codes or "200").replace(" ", "")
    if re.fullmatch(r"\d{3}", codes):
        return f"status {codes}"
    wanted: list[str] = []
    for part in codes.split(","):
        if "-" in part:
            low, high = (int(x) for x in part.split("-", 1))
            wanted += [str(c) for c in range(low, high + 1)]
        elif part:
            wanted.append(part)
    return f"rstatus ^({'|'.join(wanted)})$"


def _checks(hm: HealthMonitor, files: Files) -> list[str]:
    out = [f"    timeout check {hm.timeout}s"]
    if hm.type in ("HTTP", "HTTPS"):
        send = f"meth {hm.http_method or 'GET'} uri {hm.url_path or '/'}"
        if hm.http_version:
            send += f" ver HTTP/{hm.http_version:.1f}"
            if hm.domain_name:
                send += f" hdr Host {hm.domain_name}"
        out += ["    option httpchk", f"    http-check send {send}",
                f"    http-check expect {expected_statuses(hm.expected_codes)}"]
    elif hm.type == "TLS-HELLO":
        out.append("    option ssl-hello-chk")
    elif hm.type == "PING":
        out += ["    option external-check", f"    external-check command {files.ping_script}"]
    return out


def _server(member: Member, pool: Pool, hm: HealthMonitor | None, mode: str,
            files: Files) -> str:
    line = (f"server {member.id} {_address(member.address)}:{member.protocol_port} "
            f"weight {member.weight}")
    if hm is not None:
        line += f" check inter {hm.delay}s fall {hm.max_retries_down} rise {hm.max_retries}"
        if member.monitor_address:
            line += f" addr {member.monitor_address}"
        if member.monitor_port:
            line += f" port {member.monitor_port}"
        if hm.type == "HTTPS":
            line += " check-ssl verify none"
    if pool.protocol == "PROXY":
        line += " send-proxy"
    elif pool.protocol == "PROXYV2":
        line += " send-proxy-v2"
    if pool.tls_enabled:
        line += _server_tls(pool, files)
    sp = pool.session_persistence or {}
    if sp.get("type") == "HTTP_COOKIE" and mode == "http":
        line += f" cookie {member.id}"
    if member.backup:
        line += " backup"
    if not member.admin_state_up:
        line += " disabled"
    return line


def _server_tls(pool: Pool, files: Files) -> str:
    """Re-encryption to the members, as Octavia's amphora: the pool's
    certificate presented to them, and them verified against its CA (and
    CRL) when it has one; unverified otherwise."""
    out = " ssl"
    if pool.tls_container_ref:
        out += f" crt {files.pool_file(pool.id, 'client')}"
    if pool.ca_tls_container_ref:
        out += f" verify required ca-file {files.pool_file(pool.id, 'ca')}"
        if pool.crl_container_ref:
            out += f" crl-file {files.pool_file(pool.id, 'crl')}"
    else:
        out += " verify none"
    return out + _tls_options(pool.tls_ciphers, pool.tls_versions, pool.alpn_protocols)


PING_SCRIPT = """#!/bin/sh
# haproxy's external check: <proxy addr> <proxy port> <server addr> <server port>
exec ping -q -n -c 1 -W 1 "$3" >/dev/null 2>&1
"""
