"""The load balancers' graphs: creating, changing and deleting their
objects with Octavia's checks and status lifecycle.

Every write locks its load balancer's row, refuses a graph that is
PENDING_* (409, as Octavia), writes the objects it changes PENDING_* and the
objects above them PENDING_UPDATE, asks the provider to ``check`` the graph
as it will be (a 501 undoes it all), and after the commit hands the graph to
the provider, whose report brings everything back to ACTIVE (or removes what
was deleted).
"""
from __future__ import annotations

import dataclasses
import logging
import re
import uuid
from dataclasses import dataclass
from typing import Any, Callable

from sqlalchemy import Connection

from neutrino.context import Context
from neutrino.plugins.octavia import faults, graph, store, validate
from neutrino.plugins.octavia import provider_api as papi
from neutrino.resources import lb_graph as g
from neutrino.resources import octavia as res

LOG = logging.getLogger(__name__)

HTTP_HEADERS = ("X-Forwarded-For", "X-Forwarded-Port", "X-Forwarded-Proto")
SSL_HEADERS = ("X-SSL-Client-Verify", "X-SSL-Client-Has-Cert", "X-SSL-Client-DN",
               "X-SSL-Client-CN", "X-SSL-Issuer", "X-SSL-Client-SHA1",
               "X-SSL-Client-Not-Before", "X-SSL-Client-Not-After")
TLS_LISTENER_ATTRS = ("default_tls_container_ref", "sni_container_refs",
                      "client_ca_tls_container_ref", "client_crl_container_ref",
                      "tls_ciphers", "tls_versions", "alpn_protocols", "hsts_max_age")
DEFAULT_TIMEOUTS = {"timeout_client_data": 50000, "timeout_member_connect": 5000,
                    "timeout_member_data": 50000, "timeout_tcp_inspect": 0}
DEFAULT_TLS_VERSIONS = ["TLSv1.2", "TLSv1.3"]
DEFAULT_ALPN = ["h2", "http/1.1", "http/1.0"]
DEFAULT_CIPHERS = ("TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:"
                   "TLS_AES_128_GCM_SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
                   "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:"
                   "ECDHE-RSA-CHACHA20-POLY1305:ECDHE-ECDSA-AES128-GCM-SHA256:"
                   "ECDHE-RSA-AES128-GCM-SHA256")
SSL_DN_FIELDS = ("COUNTRY_NAME", "STATE_OR_PROVINCE_NAME", "LOCALITY_NAME",
                 "ORGANIZATION_NAME", "ORGANIZATIONAL_UNIT_NAME", "COMMON_NAME",
                 "EMAIL_ADDRESS")
# what each kind's write moves to PENDING_UPDATE above it
PARENT_KINDS = {"member": "pool", "healthmonitor": "pool", "l7policy": "listener",
                "l7rule": "l7policy"}
CALLS = {"healthmonitor": "health_monitor"}


@dataclass
class Change:
    """What a committed write asks of the provider."""

    provider: str
    graph: g.LoadBalancer
    call: str
    target: str | None = None
    cascade: bool = False


class Graphs:
    """The graph objects' operations (the plugin gives the database, the
    policy, the providers, the quotas and the VIP ports)."""

    def __init__(self, plugin: Any) -> None:
        self.plugin = plugin

    # -- reading ---------------------------------------------------------------

    def get(self, ctx: Context, kind: str, oid: str, parent: str | None = None) -> dict[str, Any]:
        rdef = res.OBJECTS[kind]
        with self.plugin.db.reader() as conn:
            obj = self._find(conn, kind, oid, parent)
            self.plugin.policy.authorize(ctx, rdef.policy, "get_one", obj["project_id"])
            objs = graph.Objects(store.of_loadbalancer(conn, obj["loadbalancer_id"]))
        return graph.view(objs.by_id[oid], objs)

    def list(self, ctx: Context, kind: str, project_filter: str | None,
             parent: str | None = None) -> list[dict[str, Any]]:
        """Every visible object of ``kind``: the caller's project's, or with
        the global read rule every project's (``project_filter`` narrows)."""
        rdef = res.OBJECTS[kind]
        with self.plugin.db.reader() as conn:
            if parent is not None:
                parent_obj = self._find(conn, PARENT_KINDS[kind], parent, None)
                self.plugin.policy.authorize(ctx, rdef.policy, "get_all",
                                             parent_obj["project_id"])
                objs = graph.Objects(store.of_loadbalancer(conn, parent_obj["loadbalancer_id"]))
                return [graph.view(o, objs) for o in objs.kids(parent, kind)]
            if self.plugin.policy.allowed(ctx, rdef.policy, "get_all-global", None):
                objs = graph.Objects(store.of_projects(conn, project_filter))
            else:
                self.plugin.policy.authorize(ctx, rdef.policy, "get_all", ctx.project_id)
                if project_filter is not None and project_filter != ctx.project_id:
                    return []
                objs = graph.Objects(store.of_projects(conn, ctx.project_id))
        return [graph.view(o, objs) for o in objs.all if o["kind"] == kind]

    def _find(self, conn: Connection, kind: str, oid: str, parent: str | None) -> dict[str, Any]:
        obj = store.one(conn, oid, kind)
        if obj is None or (parent is not None and obj["parent_id"] != parent):
            raise faults.NotFound(resource=res.OBJECTS[kind].not_found, id=oid)
        return obj

    def status_tree(self, ctx: Context, lb_id: str) -> dict[str, Any]:
        with self.plugin.db.reader() as conn:
            lb = self._find(conn, "loadbalancer", lb_id, None)
            self.plugin.policy.authorize(ctx, "loadbalancer", "get_status", lb["project_id"])
            objs = graph.Objects(store.of_loadbalancer(conn, lb_id))
        return graph.status_tree(objs.by_id[lb_id], objs)

    def graph_of(self, conn: Connection, lb_id: str) -> g.LoadBalancer | None:
        objs = graph.Objects(store.of_loadbalancer(conn, lb_id))
        lb = objs.by_id.get(lb_id)
        return None if lb is None else graph.build(lb, objs)

    # -- the write skeleton ----------------------------------------------------

    def _write(self, ctx: Context, lb_id: str, action: str, policy: str,
               fn: Callable[[Connection, graph.Objects, dict[str, Any]], tuple[str | None, str]],
               not_found: Callable[[], Exception] | None = None,
               cascade: bool = False, target: str | None = None) -> tuple[
                   dict[str, Any] | None, Change]:
        """Lock the load balancer, check the caller and the graph's state,
        let ``fn`` change it (returning the object to show and the provider
        call), check the outcome with the provider."""
        def op(conn: Connection) -> tuple[dict[str, Any] | None, Change]:
            objs = graph.Objects(store.of_loadbalancer(conn, lb_id, lock=True))
            lb = objs.by_id.get(lb_id)
            if lb is None:
                raise (not_found or (lambda: faults.NotFound(
                    resource="Load Balancer", id=lb_id)))()
            self.plugin.policy.authorize(ctx, policy, action, lb["project_id"])
            if lb["provisioning_status"] in g.PENDING:
                if policy == "loadbalancer":
                    raise faults.PendingState(state=lb["provisioning_status"], id=lb_id)
                raise faults.Immutable(resource="Load Balancer", id=lb_id)
            shown, call = fn(conn, objs, lb)
            objs = graph.Objects(store.of_loadbalancer(conn, lb_id))
            built = graph.build(objs.by_id[lb_id], objs) if lb_id in objs.by_id else None
            provider = lb["provider"]
            if built is not None:
                try:
                    self.plugin.provider(provider).check(built)
                except papi.UnsupportedOption as exc:
                    raise faults.ProviderUnsupported(prov=provider, user_msg=str(exc)) from None
            view = graph.view(objs.by_id[shown], objs) if shown else None
            return view, Change(provider, built or graph.build(lb, objs), call,
                                target or shown, cascade)
        view, change = self.plugin.write(op)
        self.plugin.hand_over(change)
        return view, change

    def _mark(self, conn: Connection, objs: graph.Objects, lb: dict[str, Any],
              *above: str | None) -> None:
        """The load balancer and the objects above a change: PENDING_UPDATE;
        one of them already pending is Octavia's 409. Under a load balancer
        being created everything stays PENDING_CREATE."""
        if lb["provisioning_status"] == g.PENDING_CREATE:
            return
        ids = [lb["id"]]
        for oid in above:
            if oid is None or oid not in objs.by_id:
                continue
            obj = objs.by_id[oid]
            if obj["provisioning_status"] in g.PENDING:
                raise faults.Immutable(resource=res.OBJECTS[obj["kind"]].not_found, id=oid)
            ids.append(oid)
        store.set_statuses(conn, ids, g.PENDING_UPDATE)
        self._touch(conn, objs, ids)

    def _touch(self, conn: Connection, objs: graph.Objects, ids: list[str]) -> None:
        store.touch(conn, ids)

    def _new(self, ctx: Context, kind: str, data: dict[str, Any], lb: dict[str, Any],
             parent: str | None, operating: str = g.OFFLINE) -> dict[str, Any]:
        obj = {k: v for k, v in data.items() if k != "project_id"}
        obj.update(id=str(uuid.uuid4()), kind=kind, project_id=lb["project_id"],
                   loadbalancer_id=lb["id"], parent_id=parent,
                   provisioning_status=g.PENDING_CREATE, operating_status=operating,
                   created_at=store.now(), updated_at=None)
        obj.setdefault("name", "")
        if "description" in {f.name for f in res.OBJECTS[kind].fields}:
            obj["description"] = obj.get("description") or ""
        obj["name"] = obj.get("name") or ""
        obj["tags"] = obj.get("tags") or []
        return obj

    def _quota(self, conn: Connection, kind: str, project_id: str, adding: int = 1) -> None:
        self.plugin.quotas.check(conn, kind, project_id, adding)

    # -- creating --------------------------------------------------------------

    def create(self, ctx: Context, kind: str, body: dict[str, Any],
               parent: str | None = None) -> dict[str, Any]:
        rdef = res.OBJECTS[kind]
        data = validate.check(rdef, body, creating=True)
        if kind == "loadbalancer":
            return self.plugin.loadbalancers.create(ctx, data)
        lb_id = self._lb_of_new(kind, data, parent)
        self._check_tls_refs(ctx, lb_id, "post", rdef.policy, data)

        def fn(conn: Connection, objs: graph.Objects, lb: dict[str, Any]) -> tuple[str, str]:
            self._quota(conn, kind, lb["project_id"])
            obj = getattr(self, f"_create_{kind}")(conn, ctx, objs, lb, data, parent)
            store.insert(conn, obj)
            return obj["id"], f"{CALLS.get(kind, kind)}_create"
        view, _ = self._write(ctx, lb_id, "post", rdef.policy, fn)
        assert view is not None
        return view

    def _check_tls_refs(self, ctx: Context, lb_id: str, action: str, policy: str,
                        data: dict[str, Any]) -> None:
        """The TLS references the request hands over, read by the load
        balancer's provider for the caller, before the transaction (as
        Octavia's API does before writing): one it cannot read is a 400."""
        certificates, secrets = papi.tls_refs(data)
        if not certificates and not secrets:
            return
        with self.plugin.db.reader() as conn:
            lb = store.one(conn, lb_id, "loadbalancer")
        if lb is None:
            raise faults.NotFound(resource="Load Balancer", id=lb_id)
        self.plugin.policy.authorize(ctx, policy, action, lb["project_id"])
        self.plugin.provider(lb["provider"]).check_tls_refs(ctx, certificates, secrets)

    def _lb_of_new(self, kind: str, data: dict[str, Any], parent: str | None) -> str:
        """The load balancer a new object goes into (404 for a missing parent)."""
        with self.plugin.db.reader() as conn:
            if kind == "listener":
                ref = ("loadbalancer", data["loadbalancer_id"])
            elif kind == "pool":
                if data.get("listener_id"):
                    ref = ("listener", data["listener_id"])
                elif data.get("loadbalancer_id"):
                    ref = ("loadbalancer", data["loadbalancer_id"])
                else:
                    raise faults.Validation(detail="Must provide at least one of: "
                                            "loadbalancer_id, listener_id")
            elif kind == "healthmonitor":
                ref = ("pool", data["pool_id"])
            elif kind == "l7policy":
                ref = ("listener", data["listener_id"])
            else:
                ref = (PARENT_KINDS[kind], parent or "")
            found = store.one(conn, ref[1], ref[0])
            if found is None:
                raise faults.NotFound(resource=res.OBJECTS[ref[0]].not_found, id=ref[1])
            return str(found["loadbalancer_id"])

    def _create_listener(self, conn: Connection, ctx: Context, objs: graph.Objects,
                         lb: dict[str, Any], data: dict[str, Any], parent: str | None) -> dict[str, Any]:
        conf = self.plugin.conf.octavia
        protocol = data["protocol"]
        if protocol == "TERMINATED_HTTPS" and not conf.allow_tls_terminated_listeners:
            raise faults.DisabledOption(option="protocol", value=protocol)
        if protocol == "PROMETHEUS" and not conf.allow_prometheus_listeners:
            raise faults.DisabledOption(option="protocol", value=protocol)
        self._check_port_free(objs, lb, protocol, data["protocol_port"], None)
        obj = self._new(ctx, "listener", data, lb, None)
        for key, default in DEFAULT_TIMEOUTS.items():
            if obj.get(key) is None:
                obj[key] = default
        obj["sni_container_refs"] = obj.get("sni_container_refs") or []
        obj["insert_headers"] = obj.get("insert_headers") or {}
        obj.pop("default_pool", None)
        obj.pop("l7policies", None)
        self._check_listener(objs, lb, obj)
        self._mark(conn, objs, lb)
        return obj

    def _check_port_free(self, objs: graph.Objects, lb: dict[str, Any], protocol: str,
                         port: int, own: str | None) -> None:
        def family(proto: str) -> str:
            return proto if proto in ("UDP", "SCTP") else "TCP"
        for other in objs.in_lb(lb["id"], "listener"):
            if other["id"] == own or other["protocol_port"] != port:
                continue
            if family(other["protocol"]) == family(protocol):
                raise faults.DuplicateListener(protocol=protocol, port=port)

    def _check_listener(self, objs: graph.Objects, lb: dict[str, Any],
                        obj: dict[str, Any]) -> None:
        protocol = obj["protocol"]
        if protocol == "TERMINATED_HTTPS":
            if not obj.get("default_tls_container_ref") and not obj.get("sni_container_refs"):
                raise faults.Validation(detail="An SNI or default certificate container "
                                        "reference must be provided for TERMINATED_HTTPS "
                                        "listeners.")
            obj["tls_versions"] = obj.get("tls_versions") or list(DEFAULT_TLS_VERSIONS)
            obj["tls_ciphers"] = obj.get("tls_ciphers") or DEFAULT_CIPHERS
            obj["alpn_protocols"] = obj.get("alpn_protocols") or list(DEFAULT_ALPN)
        else:
            for attr in TLS_LISTENER_ATTRS:
                if obj.get(attr):
                    raise faults.Validation(
                        detail=f"{attr} is not a valid option for {protocol} listeners.")
            if obj.get("client_authentication", "NONE") != "NONE":
                raise faults.Validation(detail="client_authentication is not a valid "
                                        f"option for {protocol} listeners.")
            if obj.get("hsts_include_subdomains") or obj.get("hsts_preload"):
                raise faults.Validation(detail="HTTP Strict Transport Security can only be "
                                        "enabled on TERMINATED_HTTPS listeners.")
        headers = obj.get("insert_headers") or {}
        if headers:
            allowed = (HTTP_HEADERS + SSL_HEADERS if protocol == "TERMINATED_HTTPS"
                       else HTTP_HEADERS if protocol == "HTTP" else ())
            bad = [h for h in headers if h not in allowed]
            if bad:
                raise faults.InvalidOption(value=", ".join(bad), option="insert_headers")
        if obj.get("hsts_include_subdomains") or obj.get("hsts_preload"):
            if obj.get("hsts_max_age") is None:
                raise faults.Validation(detail="HSTS configuration options require "
                                        "hsts_max_age to be set.")
        cidrs = obj.get("allowed_cidrs")
        if cidrs:
            vip_v6 = ":" in (lb.get("vip_address") or "")
            for cidr in cidrs:
                if (":" in cidr) != vip_v6:
                    raise faults.Validation(detail="CIDR {} IP version incompatible with "
                                            "all VIPs {} IP version.".format(
                                                cidr, [lb.get("vip_address")]))
            obj["allowed_cidrs"] = sorted(set(cidrs))
        pool_id = obj.get("default_pool_id")
        if pool_id:
            pool = objs.by_id.get(pool_id)
            if pool is None or pool["kind"] != "pool" or pool["loadbalancer_id"] != lb["id"]:
                raise faults.NotFound(resource="Pool", id=pool_id)
            self._check_protocols(protocol, pool["protocol"])
            users = [x for x in objs.pool_listeners(pool) if x["id"] != obj["id"]]
            if users:
                raise faults.Conflict(f"Pool {pool_id} is already in use by another listener.")

    @staticmethod
    def _check_protocols(listener: str, pool: str) -> None:
        if pool not in res.LISTENER_POOL_PROTOCOLS.get(listener, ()):
            raise faults.Validation(detail=f"The pool protocol '{pool}' is invalid while "
                                    f"the listener protocol is '{listener}'.")

    def _create_pool(self, conn: Connection, ctx: Context, objs: graph.Objects,
                     lb: dict[str, Any], data: dict[str, Any], parent: str | None) -> dict[str, Any]:
        listener = None
        if data.get("listener_id"):
            listener = objs.by_id[data["listener_id"]]
            if data.get("loadbalancer_id") and data["loadbalancer_id"] != lb["id"]:
                raise faults.Validation(detail="The loadbalancer_id and listener_id "
                                        "must refer to the same load balancer.")
            if listener.get("default_pool_id"):
                raise faults.DuplicatePool()
            self._check_protocols(listener["protocol"], data["protocol"])
        obj = self._new(ctx, "pool", data, lb, None)
        for key in ("listener_id", "healthmonitor", "members"):
            obj.pop(key, None)
        obj["session_persistence"] = self._persistence(obj["protocol"],
                                                       data.get("session_persistence"), None)
        self._check_pool(obj)
        self._mark(conn, objs, lb, listener["id"] if listener else None)
        if listener is not None:
            lis = dict(listener)
            lis.update(default_pool_id=obj["id"], provisioning_status=g.PENDING_UPDATE,
                       updated_at=store.now())
            store.save(conn, lis)
        return obj

    def _check_pool(self, obj: dict[str, Any]) -> None:
        if obj["protocol"] in ("UDP", "SCTP") and obj["lb_algorithm"] == "SOURCE_IP_PORT":
            return
        if not obj.get("tls_enabled"):
            for attr in ("tls_ciphers", "tls_versions", "alpn_protocols"):
                if obj.get(attr):
                    raise faults.Validation(detail=f"{attr} requires tls_enabled to be set.")
        elif obj["protocol"] not in ("HTTP", "HTTPS", "TCP", "PROXY", "PROXYV2"):
            raise faults.Validation(detail="TLS is not supported on "
                                    f"{obj['protocol']} pools.")

    @staticmethod
    def _persistence(protocol: str, given: Any, current: dict[str, Any] | None) -> dict[str, Any] | None:
        if given is None:
            return None
        if not isinstance(given, dict):
            raise faults.InvalidInput("session_persistence", given, "Wrong type. Expected 'dict'")
        unknown = [k for k in given if k not in {f.name for f in res.SESSION_PERSISTENCE}]
        if unknown:
            raise faults.UnknownAttribute("session_persistence", unknown)
        sp = dict(current or {})
        if given.get("type") and sp.get("type") != given["type"]:
            sp = {}  # another kind of persistence keeps nothing of the last one
        for fld in res.SESSION_PERSISTENCE:
            if fld.name in given:
                sp[fld.name] = (None if given[fld.name] is None
                                else validate.convert(fld, given[fld.name]))
        if not sp.get("type"):
            raise faults.InvalidInput("type", None, "Mandatory field missing.")
        kind = sp["type"]
        if kind == "APP_COOKIE" and not sp.get("cookie_name"):
            raise faults.Validation(detail="Cookie names are required for APP_COOKIE "
                                    "session persistence.")
        if kind != "APP_COOKIE" and sp.get("cookie_name"):
            raise faults.Validation(detail="Cookie names are not supported for "
                                    f"{kind} session persistence.")
        udp = protocol in ("UDP", "SCTP")
        if udp and kind != "SOURCE_IP":
            raise faults.Validation(detail=f"Session persistence of type {kind} is not "
                                    f"supported for {protocol} protocol pools.")
        if not udp and (sp.get("persistence_timeout") is not None
                        or sp.get("persistence_granularity") is not None):
            raise faults.Validation(detail="persistence_timeout and persistence_granularity "
                                    "are only for UDP and SCTP protocol pools.")
        return {"type": kind, "cookie_name": sp.get("cookie_name"),
                "persistence_timeout": sp.get("persistence_timeout"),
                "persistence_granularity": sp.get("persistence_granularity")}

    def _create_member(self, conn: Connection, ctx: Context, objs: graph.Objects,
                       lb: dict[str, Any], data: dict[str, Any], parent: str | None) -> dict[str, Any]:
        pool = objs.by_id[parent or ""]
        self._check_member(ctx, objs, pool, data, None)
        has_hm = objs.healthmonitor(pool["id"]) is not None
        obj = self._new(ctx, "member", data, lb, pool["id"],
                        g.OFFLINE if has_hm else g.NO_MONITOR)
        obj.pop("request_sriov", None)
        obj["vnic_type"] = "normal"
        self._mark(conn, objs, lb, pool["id"], *[x["id"] for x in objs.pool_listeners(pool)])
        return obj

    def _check_member(self, ctx: Context, objs: graph.Objects, pool: dict[str, Any],
                      data: dict[str, Any], own: str | None) -> None:
        for other in objs.kids(pool["id"], "member"):
            if other["id"] != own and other["address"] == data["address"] and \
                    other["protocol_port"] == data["protocol_port"]:
                raise faults.DuplicateMember(ip_address=data["address"],
                                             port=data["protocol_port"])
        if data.get("subnet_id"):
            self.plugin.vips.subnet_visible(ctx, data["subnet_id"])

    def _create_healthmonitor(self, conn: Connection, ctx: Context, objs: graph.Objects,
                              lb: dict[str, Any], data: dict[str, Any],
                              parent: str | None) -> dict[str, Any]:
        pool = objs.by_id[data["pool_id"]]
        if objs.healthmonitor(pool["id"]) is not None:
            raise faults.DuplicateHealthMonitor()
        obj = self._new(ctx, "healthmonitor", data, lb, pool["id"])
        obj.pop("pool_id", None)
        self._check_monitor(pool, obj, creating=True)
        self._mark(conn, objs, lb, pool["id"], *[x["id"] for x in objs.pool_listeners(pool)])
        return obj

    def _check_monitor(self, pool: dict[str, Any], obj: dict[str, Any], creating: bool) -> None:
        kind = obj["type"]
        http = kind in ("HTTP", "HTTPS")
        for attr in ("http_method", "url_path", "expected_codes"):
            if not http and obj.get(attr) is not None:
                raise faults.InvalidOption(value=attr,
                                           option=f"health monitors of type {kind}")
        if http:
            obj["http_method"] = obj.get("http_method") or "GET"
            obj["url_path"] = obj.get("url_path") or "/"
            obj["expected_codes"] = obj.get("expected_codes") or "200"
        if obj.get("domain_name") and obj.get("http_version") != 1.1:
            raise faults.Validation(detail="The domain_name requires http_version 1.1.")
        if not http and (obj.get("http_version") is not None or obj.get("domain_name")):
            raise faults.InvalidOption(value="http_version",
                                       option=f"health monitors of type {kind}")
        proto = pool["protocol"]
        if proto in ("UDP", "SCTP"):
            allowed = ("UDP-CONNECT", "HTTP", "TCP", "PING", "SCTP")
            if kind not in allowed:
                raise faults.Validation(detail=f"The associated pool protocol is {proto}, "
                                        "so only a UDP-CONNECT, SCTP, HTTP, PING or TCP "
                                        "health monitor type is supported.")
            if obj["delay"] < obj["timeout"]:
                raise faults.Validation(detail="The request delay value {} should be larger "
                                        "than the request timeout value {}.".format(
                                            obj["delay"], obj["timeout"]))
        elif kind in ("UDP-CONNECT",):
            raise faults.Validation(detail=f"The {kind} type is only supported for pools of "
                                    "type UDP.")
        elif kind == "SCTP":
            raise faults.Validation(detail="The SCTP type is only supported for pools of "
                                    "type SCTP.")

    def _create_l7policy(self, conn: Connection, ctx: Context, objs: graph.Objects,
                         lb: dict[str, Any], data: dict[str, Any],
                         parent: str | None) -> dict[str, Any]:
        listener = objs.by_id[data["listener_id"]]
        obj = self._new(ctx, "l7policy", data, lb, listener["id"])
        obj.pop("listener_id", None)
        obj.pop("rules", None)
        self._check_policy(objs, lb, listener, obj)
        self._place(conn, objs, listener["id"], obj, data.get("position"))
        self._mark(conn, objs, lb, listener["id"])
        return obj

    def _check_policy(self, objs: graph.Objects, lb: dict[str, Any],
                      listener: dict[str, Any], obj: dict[str, Any]) -> None:
        if listener["protocol"] in ("UDP", "SCTP", "PROMETHEUS"):
            raise faults.Validation(detail=f"{listener['protocol']} protocol listeners do not "
                                    "support L7 policies.")
        action = obj["action"]
        needs = {"REDIRECT_TO_POOL": "redirect_pool_id", "REDIRECT_TO_URL": "redirect_url",
                 "REDIRECT_PREFIX": "redirect_prefix"}
        wanted = needs.get(action)
        if wanted and not obj.get(wanted):
            raise faults.BadRequest(f"Invalid L7 Policy arguments: {wanted} is required for "
                                    f"the {action} action.")
        for attr in needs.values():
            if attr != wanted:
                obj[attr] = None
        if action in ("REDIRECT_TO_URL", "REDIRECT_PREFIX"):
            obj["redirect_http_code"] = obj.get("redirect_http_code") or 302
        else:
            obj["redirect_http_code"] = None
        if action == "REDIRECT_TO_POOL":
            pool = objs.by_id.get(obj["redirect_pool_id"])
            if pool is None or pool["kind"] != "pool" or pool["loadbalancer_id"] != lb["id"]:
                raise faults.InvalidSubresource(resource="Pool", id=obj["redirect_pool_id"])
            self._check_protocols(listener["protocol"], pool["protocol"])

    def _place(self, conn: Connection, objs: graph.Objects, listener_id: str,
               obj: dict[str, Any], position: int | None) -> None:
        """Octavia keeps a listener's policies numbered 1..n: one placed at a
        taken position pushes the others down, one past the end is last."""
        others = [p for p in objs.policies(listener_id) if p["id"] != obj["id"]]
        index = len(others) if position is None else max(0, min(position - 1, len(others)))
        ordered = others[:index] + [obj] + others[index:]
        for number, pol in enumerate(ordered, start=1):
            if pol is obj:
                obj["position"] = number
            elif pol["position"] != number:
                changed = dict(pol)
                changed["position"] = number
                store.save(conn, changed)

    def _create_l7rule(self, conn: Connection, ctx: Context, objs: graph.Objects,
                       lb: dict[str, Any], data: dict[str, Any], parent: str | None) -> dict[str, Any]:
        policy = objs.by_id[parent or ""]
        if len(objs.kids(policy["id"], "l7rule")) >= res.MAX_L7RULES_PER_L7POLICY:
            raise faults.TooManyRules(id=policy["id"])
        obj = self._new(ctx, "l7rule", data, lb, policy["id"])
        self._check_rule(obj)
        self._mark(conn, objs, lb, policy["parent_id"], policy["id"])
        return obj

    @staticmethod
    def _check_rule(obj: dict[str, Any]) -> None:
        def bad(msg: str) -> faults.Fault:
            return faults.BadRequest(f"Error parsing L7Rule: {msg}")
        kind, compare, value, key = obj["type"], obj["compare_type"], obj["value"], obj.get("key")
        if compare == "REGEX":
            try:
                re.compile(value)
            except re.error as exc:
                raise bad(f"Unable to parse regular expression: {exc}") from None
        if kind in ("HEADER", "COOKIE"):
            if not key:
                raise bad(f"key is required for rules of type {kind}")
            if kind == "HEADER" and not re.match(r"^[a-zA-Z0-9!#$%&'*+.^_`|~-]+$", key):
                raise bad("HTTP header names may only contain token characters")
        elif kind == "SSL_DN_FIELD":
            if key not in SSL_DN_FIELDS:
                raise bad(f"key must be one of {', '.join(SSL_DN_FIELDS)}")
        elif key:
            raise bad(f"key is not a valid option for rules of type {kind}")
        if kind == "FILE_TYPE" and compare not in ("EQUAL_TO", "REGEX"):
            raise bad("FILE_TYPE rules may only use EQUAL_TO or REGEX comparisons")
        if kind == "SSL_CONN_HAS_CERT" and (compare != "EQUAL_TO" or value != "True"):
            raise bad("SSL_CONN_HAS_CERT rules compare EQUAL_TO the value 'True'")
        if kind == "SSL_VERIFY_RESULT" and (compare != "EQUAL_TO" or not value.isdigit()):
            raise bad("SSL_VERIFY_RESULT rules compare EQUAL_TO a number")
        if kind in ("HOST_NAME", "PATH", "FILE_TYPE", "HEADER", "COOKIE") and \
                compare != "REGEX" and re.search(r"\s", value):
            raise bad("value may not contain whitespace")

    # -- updating --------------------------------------------------------------

    def update(self, ctx: Context, kind: str, oid: str, body: dict[str, Any],
               parent: str | None = None) -> dict[str, Any]:
        rdef = res.OBJECTS[kind]
        data = validate.check(rdef, body, creating=False)
        lb_id = self._lb_of(kind, oid, parent)
        self._check_tls_refs(ctx, lb_id, "put", rdef.policy, data)

        def fn(conn: Connection, objs: graph.Objects, lb: dict[str, Any]) -> tuple[str, str]:
            obj = dict(objs.by_id[oid])
            if obj["provisioning_status"] in g.PENDING and kind != "loadbalancer":
                raise faults.Immutable(resource=rdef.not_found, id=oid)
            getattr(self, f"_update_{kind}")(conn, ctx, objs, lb, obj, data)
            obj["updated_at"] = store.now()
            obj["provisioning_status"] = g.PENDING_UPDATE
            store.save(conn, obj)
            return oid, f"{CALLS.get(kind, kind)}_update"
        view, _ = self._write(ctx, lb_id, "put", rdef.policy, fn)
        assert view is not None
        return view

    def _lb_of(self, kind: str, oid: str, parent: str | None) -> str:
        with self.plugin.db.reader() as conn:
            return str(self._find(conn, kind, oid, parent)["loadbalancer_id"])

    @staticmethod
    def _apply(obj: dict[str, Any], data: dict[str, Any],
               defaults: dict[str, Any] | None = None) -> None:
        for key, value in data.items():
            if value is None and defaults and key in defaults:
                value = defaults[key]
            obj[key] = value
        if "tags" in data:
            obj["tags"] = data["tags"] or []
        for text in ("name", "description"):
            if text in data and data[text] is None:
                obj[text] = ""

    def _update_loadbalancer(self, conn: Connection, ctx: Context, objs: graph.Objects,
                             lb: dict[str, Any], obj: dict[str, Any], data: dict[str, Any]) -> None:
        if data.get("vip_qos_policy_id"):
            self.plugin.vips.qos_policy_exists(data["vip_qos_policy_id"])
        self._apply(obj, data)

    def _update_listener(self, conn: Connection, ctx: Context, objs: graph.Objects,
                         lb: dict[str, Any], obj: dict[str, Any], data: dict[str, Any]) -> None:
        defaults = {**DEFAULT_TIMEOUTS, "connection_limit": -1, "insert_headers": {},
                    "sni_container_refs": [], "client_authentication": "NONE",
                    "hsts_include_subdomains": False, "hsts_preload": False}
        if obj["protocol"] == "TERMINATED_HTTPS":
            defaults.update(tls_versions=list(DEFAULT_TLS_VERSIONS),
                            tls_ciphers=DEFAULT_CIPHERS, alpn_protocols=list(DEFAULT_ALPN))
        self._apply(obj, data, defaults)
        self._check_listener(objs, lb, obj)
        self._mark(conn, objs, lb)

    def _update_pool(self, conn: Connection, ctx: Context, objs: graph.Objects,
                     lb: dict[str, Any], obj: dict[str, Any], data: dict[str, Any]) -> None:
        if "session_persistence" in data:
            current = obj.get("session_persistence")
            given = data.pop("session_persistence")
            obj["session_persistence"] = self._persistence(obj["protocol"], given, current)
        self._apply(obj, data)
        self._check_pool(obj)
        self._mark(conn, objs, lb, *[x["id"] for x in objs.pool_listeners(obj)])

    def _update_member(self, conn: Connection, ctx: Context, objs: graph.Objects,
                       lb: dict[str, Any], obj: dict[str, Any], data: dict[str, Any]) -> None:
        self._apply(obj, data, {"weight": 1, "backup": False, "admin_state_up": True})
        pool = objs.by_id[obj["parent_id"]]
        self._mark(conn, objs, lb, pool["id"], *[x["id"] for x in objs.pool_listeners(pool)])

    def _update_healthmonitor(self, conn: Connection, ctx: Context, objs: graph.Objects,
                              lb: dict[str, Any], obj: dict[str, Any],
                              data: dict[str, Any]) -> None:
        http = obj["type"] in ("HTTP", "HTTPS")
        for attr in ("http_method", "url_path", "expected_codes"):
            if not http and data.get(attr) is not None:
                raise faults.InvalidOption(value=attr,
                                           option=f"health monitors of type {obj['type']}")
        self._apply(obj, data, {"max_retries_down": 3, "admin_state_up": True})
        pool = objs.by_id[obj["parent_id"]]
        self._check_monitor(pool, obj, creating=False)
        self._mark(conn, objs, lb, pool["id"], *[x["id"] for x in objs.pool_listeners(pool)])

    def _update_l7policy(self, conn: Connection, ctx: Context, objs: graph.Objects,
                         lb: dict[str, Any], obj: dict[str, Any], data: dict[str, Any]) -> None:
        position = data.pop("position", None)
        if "redirect_http_code" not in data and data.get("action") not in (None, obj["action"]):
            obj["redirect_http_code"] = None
        self._apply(obj, data)
        listener = objs.by_id[obj["parent_id"]]
        self._check_policy(objs, lb, listener, obj)
        if position is not None:
            self._place(conn, objs, listener["id"], obj, position)
        self._mark(conn, objs, lb, listener["id"])

    def _update_l7rule(self, conn: Connection, ctx: Context, objs: graph.Objects,
                       lb: dict[str, Any], obj: dict[str, Any], data: dict[str, Any]) -> None:
        if "type" in data and data["type"] not in ("HEADER", "COOKIE", "SSL_DN_FIELD") \
                and "key" not in data:
            obj["key"] = None
        self._apply(obj, data, {"invert": False, "admin_state_up": True})
        if obj.get("value") is None:
            raise faults.InvalidInput("value", None, "Mandatory field missing.")
        self._check_rule(obj)
        policy = objs.by_id[obj["parent_id"]]
        self._mark(conn, objs, lb, policy["parent_id"], policy["id"])

    # -- deleting --------------------------------------------------------------

    def delete(self, ctx: Context, kind: str, oid: str, parent: str | None = None,
               cascade: bool = False) -> None:
        rdef = res.OBJECTS[kind]
        lb_id = self._lb_of(kind, oid, parent)

        def fn(conn: Connection, objs: graph.Objects, lb: dict[str, Any]) -> tuple[None, str]:
            obj = objs.by_id[oid]
            if kind != "loadbalancer" and obj["provisioning_status"] in g.PENDING:
                raise faults.Immutable(resource=rdef.not_found, id=oid)
            gone = getattr(self, f"_delete_{kind}")(conn, objs, lb, obj, cascade)
            store.set_statuses(conn, gone, g.PENDING_DELETE)
            return None, f"{CALLS.get(kind, kind)}_delete"
        self._write(ctx, lb_id, "delete", rdef.policy, fn, cascade=cascade, target=oid)

    def _subtree(self, objs: graph.Objects, oid: str) -> list[str]:
        out = [oid]
        for child in objs.children.get(oid, []):
            out += self._subtree(objs, child["id"])
        return out

    def _delete_loadbalancer(self, conn: Connection, objs: graph.Objects, lb: dict[str, Any],
                             obj: dict[str, Any], cascade: bool) -> list[str]:
        everything = [o["id"] for o in objs.all]
        if len(everything) > 1 and not cascade:
            raise faults.Validation(detail=f"Cannot delete Load Balancer {lb['id']} - "
                                    "it has children")
        return everything

    def _delete_listener(self, conn: Connection, objs: graph.Objects, lb: dict[str, Any],
                         obj: dict[str, Any], cascade: bool) -> list[str]:
        self._mark(conn, objs, lb)
        return self._subtree(objs, obj["id"])

    def _delete_pool(self, conn: Connection, objs: graph.Objects, lb: dict[str, Any],
                     obj: dict[str, Any], cascade: bool) -> list[str]:
        for pol in objs.in_lb(lb["id"], "l7policy"):
            if pol.get("redirect_pool_id") == obj["id"]:
                raise faults.PoolInUseByL7Policy(id=obj["id"], l7policy_id=pol["id"])
        users = objs.pool_listeners(obj)
        self._mark(conn, objs, lb, *[x["id"] for x in users])
        for listener in users:
            changed = dict(objs.by_id[listener["id"]])
            changed.update(default_pool_id=None, provisioning_status=g.PENDING_UPDATE,
                           updated_at=store.now())
            store.save(conn, changed)
        return self._subtree(objs, obj["id"])

    def _delete_member(self, conn: Connection, objs: graph.Objects, lb: dict[str, Any],
                       obj: dict[str, Any], cascade: bool) -> list[str]:
        pool = objs.by_id[obj["parent_id"]]
        self._mark(conn, objs, lb, pool["id"], *[x["id"] for x in objs.pool_listeners(pool)])
        return [obj["id"]]

    _delete_healthmonitor = _delete_member

    def _delete_l7policy(self, conn: Connection, objs: graph.Objects, lb: dict[str, Any],
                         obj: dict[str, Any], cascade: bool) -> list[str]:
        self._mark(conn, objs, lb, obj["parent_id"])
        rest = [p for p in objs.policies(obj["parent_id"]) if p["id"] != obj["id"]]
        for number, pol in enumerate(rest, start=1):
            if pol["position"] != number:
                changed = dict(pol)
                changed["position"] = number
                store.save(conn, changed)
        return self._subtree(objs, obj["id"])

    def _delete_l7rule(self, conn: Connection, objs: graph.Objects, lb: dict[str, Any],
                       obj: dict[str, Any], cascade: bool) -> list[str]:
        policy = objs.by_id[obj["parent_id"]]
        self._mark(conn, objs, lb, policy["parent_id"], policy["id"])
        return [obj["id"]]

    # -- members' batch update and failover -------------------------------------

    def batch_members(self, ctx: Context, pool_id: str, raw: Any, additive_only: bool) -> None:
        if not isinstance(raw, dict) or not isinstance(raw.get("members"), list):
            raise faults.InvalidInput("members", raw, "Mandatory field missing.")
        wanted = [validate.check(res.MEMBER, validate.body_of({"m": m}, "m"), creating=True,
                                 where="member") for m in raw["members"]]
        keys = [(m["address"], m["protocol_port"]) for m in wanted]
        if len(set(keys)) != len(keys):
            raise faults.Validation(detail="Duplicate members in the request.")
        lb_id = self._lb_of("pool", pool_id, None)

        def fn(conn: Connection, objs: graph.Objects, lb: dict[str, Any]) -> tuple[None, str]:
            pool = objs.by_id[pool_id]
            if pool["provisioning_status"] in g.PENDING:
                raise faults.Immutable(resource="Pool", id=pool_id)
            current = {(m["address"], m["protocol_port"]): m
                       for m in objs.kids(pool_id, "member")}
            has_hm = objs.healthmonitor(pool_id) is not None
            new = [m for m, k in zip(wanted, keys) if k not in current]
            self._quota(conn, "member", lb["project_id"], len(new))
            for data, key in zip(wanted, keys):
                if data.get("subnet_id"):
                    self.plugin.vips.subnet_visible(ctx, data["subnet_id"])
                if key in current:
                    obj = dict(current[key])
                    changes = {k: v for k, v in data.items()
                               if k in ("name", "weight", "admin_state_up", "backup",
                                        "monitor_address", "monitor_port", "tags")}
                    if any(obj.get(k) != v for k, v in changes.items()):
                        obj.update(changes)
                        obj.update(provisioning_status=g.PENDING_UPDATE, updated_at=store.now())
                        store.save(conn, obj)
                else:
                    obj = self._new(ctx, "member", data, lb, pool_id,
                                    g.OFFLINE if has_hm else g.NO_MONITOR)
                    obj.pop("request_sriov", None)
                    obj["vnic_type"] = "normal"
                    store.insert(conn, obj)
            if not additive_only:
                store.set_statuses(conn, [m["id"] for k, m in current.items() if k not in keys],
                                   g.PENDING_DELETE)
            self._mark(conn, objs, lb, pool_id, *[x["id"] for x in objs.pool_listeners(pool)])
            return None, "member_batch_update"
        self._write(ctx, lb_id, "put", "member", fn,
                    lambda: faults.NotFound(resource="Pool", id=pool_id), target=pool_id)

    def failover(self, ctx: Context, lb_id: str) -> None:
        with self.plugin.db.reader() as conn:
            self._find(conn, "loadbalancer", lb_id, None)

        def fn(conn: Connection, objs: graph.Objects, lb: dict[str, Any]) -> tuple[None, str]:
            self._mark(conn, objs, lb)
            return None, "loadbalancer_failover"
        self._write(ctx, lb_id, "put_failover", "loadbalancer", fn)

    # -- a load balancer's tree in one create ------------------------------------

    def create_tree(self, conn: Connection, ctx: Context, lb: dict[str, Any],
                    listeners: list[Any], pools: list[Any]) -> None:
        """Octavia's single-call create: the load balancer's listeners (each
        with its default pool, members, monitor, L7 policies, their rules and
        redirect pools) and pools, written PENDING_CREATE in the load
        balancer's own transaction."""
        for raw in pools:
            self._tree_pool(conn, ctx, lb, raw, None)
        for raw in listeners:
            data = validate.check(_single(res.LISTENER, "loadbalancer_id"),
                                  _obj(raw, "listeners"), creating=True, where="listener")
            pool_raw, policies_raw = data.pop("default_pool", None), data.pop("l7policies", None)
            data["loadbalancer_id"] = lb["id"]
            listener = self._tree_insert(conn, ctx, lb, "listener", data, None)
            if pool_raw is not None:
                self._tree_pool(conn, ctx, lb, pool_raw, listener["id"])
            for pol_raw in policies_raw or []:
                pol = validate.check(_single(res.L7POLICY, "listener_id", "redirect_pool_id"),
                                     _obj(pol_raw, "l7policies"), creating=True,
                                     where="l7policy", extra=("redirect_pool",))
                redirect, rules = pol.pop("redirect_pool", None), pol.pop("rules", None)
                if redirect is not None:
                    pol["redirect_pool_id"] = self._tree_pool(conn, ctx, lb, redirect, None)
                pol["listener_id"] = listener["id"]
                policy = self._tree_insert(conn, ctx, lb, "l7policy", pol, None)
                for rule_raw in rules or []:
                    rule = validate.check(res.L7RULE, _obj(rule_raw, "rules"), creating=True,
                                          where="rule")
                    self._tree_insert(conn, ctx, lb, "l7rule", rule, policy["id"])
        store.set_statuses(conn, [o["id"] for o in store.of_loadbalancer(conn, lb["id"])],
                           g.PENDING_CREATE)

    def _tree_pool(self, conn: Connection, ctx: Context, lb: dict[str, Any], raw: Any,
                   listener_id: str | None) -> str:
        data = validate.check(_single(res.POOL, "listener_id", "loadbalancer_id"),
                              _obj(raw, "pool"), creating=True, where="pool")
        members, monitor = data.pop("members", None), data.pop("healthmonitor", None)
        data["listener_id"], data["loadbalancer_id"] = listener_id, lb["id"]
        pool = self._tree_insert(conn, ctx, lb, "pool", data, None)
        for member_raw in members or []:
            member = validate.check(res.MEMBER, _obj(member_raw, "members"), creating=True,
                                    where="member")
            self._tree_insert(conn, ctx, lb, "member", member, pool["id"])
        if monitor is not None:
            hm = validate.check(_single(res.HEALTHMONITOR, "pool_id"),
                                _obj(monitor, "healthmonitor"), creating=True,
                                where="healthmonitor")
            hm["pool_id"] = pool["id"]
            self._tree_insert(conn, ctx, lb, "healthmonitor", hm, None)
        return str(pool["id"])

    def _tree_insert(self, conn: Connection, ctx: Context, lb: dict[str, Any], kind: str,
                     data: dict[str, Any], parent: str | None) -> dict[str, Any]:
        self._quota(conn, kind, lb["project_id"])
        objs = graph.Objects(store.of_loadbalancer(conn, lb["id"]))
        obj: dict[str, Any] = getattr(self, f"_create_{kind}")(conn, ctx, objs, lb, data, parent)
        store.insert(conn, obj)
        return obj


def _single(rdef: res.OctaviaResource, *dropped: str) -> res.OctaviaResource:
    """The resource as a single-call create nests it: without the reference
    to its parent, which the nesting gives."""
    return dataclasses.replace(rdef, fields=tuple(f for f in rdef.fields
                                                  if f.name not in dropped))


def _obj(raw: Any, where: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise faults.InvalidInput(where, raw, "Value should be an object")
    return raw
