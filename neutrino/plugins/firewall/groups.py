"""Firewall groups: their ports, policies, statuses and writes.

A group holds router interfaces (applied by L3 agents) and, where the
driver supports them, instances' ports; a port is in one group at most.
Its status is upstream's agent driver's: ``INACTIVE`` without ports or
without policies, ``PENDING_CREATE``/``PENDING_UPDATE`` once there is
something for agents to apply, then what the agents report (``ACTIVE``,
``DOWN`` for a group set administratively down, ``ERROR``). A group
pending for agents refuses changes (its policies' and rules' too).
A group with ports cannot be deleted.

Every project has one group named ``default`` (ingress: deny, egress:
allow, for both IP versions, from ``[default_fwg_rules]``), made on the
project's first use of the API; only its ports change, except that admins
may change all but its name and delete it (with its two policies).
"""
from __future__ import annotations

import json
from typing import Any, Sequence

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import store
from neutrino.plugins.firewall import policies, rows, rules
from neutrino.resources import firewall as res

G, GP, D = rows.G, rows.GP, rows.D
POLICY_KEYS = ("ingress_firewall_policy_id", "egress_firewall_policy_id")
DEFAULT_LOCKED = ("name", "description", "admin_state_up", *POLICY_KEYS)
OVS_AGENT, L2_EXTENSION = "Open vSwitch agent", "fwaas_v2"


def _status(ports: Sequence[str], group: dict[str, Any], pending: str) -> str:
    if not ports or not any(group.get(k) for k in POLICY_KEYS):
        return res.INACTIVE
    return pending


def check_policies(conn: Connection, ctx: Context, project_id: str,
                   group: dict[str, Any]) -> None:
    for key in POLICY_KEYS:
        pid = group.get(key)
        if not pid:
            continue
        policy = conn.execute(sa.select(rows.P).where(rows.P.c.id == pid)).first()
        if policy is None or not rows.sees(ctx, policy):
            raise rows.policy_not_found(pid)
        if policy.project_id != project_id and not policy.shared:
            raise errors.FirewallPolicyConflict(firewall_policy_id=pid)


def check_ports(conn: Connection, ctx: Context, driver: str, ports: Sequence[str],
                group_id: str | None) -> None:
    """Each port the caller's, a router interface (or a supported instance
    port), and in no other group."""
    for port_id in ports:
        port = conn.execute(sa.select(t.ports).where(t.ports.c.id == port_id)).first()
        if port is None or not (ctx.is_admin or port.project_id == ctx.project_id):
            raise errors.PortNotFound(port_id=port_id)
        owner = port.device_owner or ""
        if owner in res.ROUTER_INTERFACE_OWNERS:
            continue
        if owner.startswith(res.COMPUTE_PREFIX):
            if not l2_supported(conn, port_id):
                raise errors.FirewallGroupPortNotSupported(driver_name=driver, port_id=port_id)
            continue
        raise errors.FirewallGroupPortInvalid(port_id=port_id)
    if ports:
        taken = sorted(r.port_id for r in conn.execute(
            sa.select(GP.c.port_id).where(GP.c.port_id.in_(list(ports)),
                                          *([GP.c.firewall_group_id != group_id]
                                            if group_id else []))))
        if taken:
            raise errors.FirewallGroupPortInUse(port_ids=taken)


def l2_supported(conn: Connection, port_id: str) -> bool:
    """Bound to OVS on a host whose Open vSwitch agent runs the ``fwaas_v2``
    extension (its state report's ``extensions``), with port security on:
    the only ports an L2 agent applies groups on (it filters after the
    security groups, so a port they leave alone is not filtered; upstream
    accepts those and filters them, neutrino refuses them)."""
    found = conn.execute(sa.select(t.ml2_port_bindings.c.vif_type,
                                   t.ml2_port_bindings.c.host).where(
        t.ml2_port_bindings.c.port_id == port_id)).first()
    if found is None or found.vif_type != "ovs" or not found.host:
        return False
    secured = conn.execute(sa.select(t.port_port_security.c.port_security_enabled).where(
        t.port_port_security.c.port_id == port_id)).scalar()
    if secured is False:
        return False
    reported = conn.execute(sa.select(t.agents.c.configurations).where(
        t.agents.c.agent_type == OVS_AGENT, t.agents.c.host == found.host)).scalar()
    try:
        extensions = json.loads(reported or "{}").get("extensions") or ()
    except (ValueError, AttributeError):
        return False
    return L2_EXTENSION in extensions


def _set_ports(conn: Connection, group_id: str, ports: Sequence[str]) -> None:
    conn.execute(sa.delete(GP).where(GP.c.firewall_group_id == group_id))
    if ports:
        conn.execute(sa.insert(GP), [{"firewall_group_id": group_id, "port_id": p}
                                     for p in ports])


def create(conn: Connection, ctx: Context, data: dict[str, Any], driver: str) -> str:
    if data.get("name") == res.DEFAULT_FWG:
        raise errors.FirewallDefaultParameterExists(resource_type="Firewall Group",
                                                    name=res.DEFAULT_FWG)
    row = store.standard_row(ctx.project_id, data, revision=0)
    ports = data.get("ports") or []
    check_policies(conn, ctx, row["project_id"], data)
    check_ports(conn, ctx, driver, ports, None)
    row.update(shared=bool(data.get("shared")), admin_state_up=data.get("admin_state_up", True),
               status=_status(ports, data, res.PENDING_CREATE),
               **{k: data.get(k) for k in POLICY_KEYS})
    conn.execute(sa.insert(G).values(**row))
    _set_ports(conn, row["id"], ports)
    if data.get("tags"):
        store.tag_new(conn, row["id"], data["tags"])
    return str(row["id"])


def _refuse_pending(group: Any) -> None:
    if group.status in res.PENDING:
        raise errors.FirewallGroupInPendingState(firewall_id=group.id,
                                                 pending_state=group.status)


def update(conn: Connection, ctx: Context, gid: str, data: dict[str, Any],
           revision: int | None, driver: str) -> tuple[list[str], bool]:
    """Apply a change; the ports it held before, and whether agents must apply it."""
    if data.get("name") == res.DEFAULT_FWG:
        raise errors.FirewallDefaultParameterExists(resource_type="Firewall Group",
                                                    name=res.DEFAULT_FWG)
    current = rows.row(conn, "firewall_groups", gid, for_update=True)
    _refuse_pending(current)
    if current.name == res.DEFAULT_FWG:
        locked = ("name",) if ctx.is_admin else DEFAULT_LOCKED
        if any(k in data for k in locked):
            raise errors.FirewallDefaultObjectUpdateRestricted(resource_type="Firewall Group",
                                                               resource_id=gid)
    store.check_revision(conn, G, gid, revision)
    old_ports = rows.group_ports(conn, [gid])[gid]
    old = {"ports": old_ports, "admin_state_up": bool(current.admin_state_up),
           **{k: getattr(current, k) for k in POLICY_KEYS}}
    new = {**old, **{k: data[k] for k in (*POLICY_KEYS, "ports", "admin_state_up")
                     if k in data}}
    check_policies(conn, ctx, current.project_id, {k: data.get(k) for k in POLICY_KEYS})
    if "ports" in data:
        check_ports(conn, ctx, driver, data["ports"], gid)
        _set_ports(conn, gid, data["ports"])
    changed = (set(new["ports"]) != set(old["ports"])
               or any(new[k] != old[k] for k in (*POLICY_KEYS, "admin_state_up")))
    values = {k: data[k] for k in ("name", "description", "shared", "admin_state_up",
                                   *POLICY_KEYS) if k in data}
    if changed:
        values["status"] = _status(new["ports"], new, res.PENDING_UPDATE)
    store.bump(conn, G, gid, values)
    return old_ports, changed and bool(new["ports"] or old["ports"])


def delete(conn: Connection, ctx: Context, gid: str, revision: int | None) -> None:
    current = rows.row(conn, "firewall_groups", gid, for_update=True)
    if current.name == res.DEFAULT_FWG:
        if not ctx.is_admin:
            raise errors.FirewallGroupCannotRemoveDefault()
    elif rows.group_ports(conn, [gid])[gid]:
        raise errors.FirewallGroupInUse(firewall_id=gid)
    store.check_revision(conn, G, gid, revision)
    store.delete_tags(conn, gid)
    conn.execute(sa.delete(G).where(G.c.id == gid))
    if current.name == res.DEFAULT_FWG:
        for key in POLICY_KEYS:
            pid = getattr(current, key)
            if pid and not rows.groups_with_policies(conn, [pid]):
                store.delete_tags(conn, pid)
                conn.execute(sa.delete(rows.P).where(rows.P.c.id == pid))


def policies_changed(conn: Connection, policy_ids: Sequence[str]) -> list[str]:
    """After a change of these policies (or their rules): the groups using
    them must not be pending; those with ports go ``PENDING_UPDATE`` for
    their agents. Their ids."""
    groups = rows.groups_with_policies(conn, policy_ids)
    for group in groups:
        _refuse_pending(group)
    ports = rows.group_ports(conn, [g.id for g in groups])
    busy = [g.id for g in groups if ports[g.id]]
    if busy:
        conn.execute(sa.update(G).where(G.c.id.in_(busy)).values(status=res.PENDING_UPDATE))
    return busy


def set_status(conn: Connection, gid: str, status: str) -> bool:
    """An agent's report (upstream's ``set_firewall_group_status``): ACTIVE,
    DOWN and INACTIVE as given, anything else ERROR; never over a deletion."""
    wanted = status if status in (res.ACTIVE, res.DOWN, res.INACTIVE) else res.ERROR
    done = conn.execute(sa.update(G).where(G.c.id == gid, G.c.status != res.PENDING_DELETE)
                        .values(status=wanted)).rowcount
    return bool(done) and wanted != res.ERROR


# -- the default group ------------------------------------------------------------------

def default_of(conn: Connection, project_id: str) -> str | None:
    return conn.execute(sa.select(D.c.firewall_group_id).where(
        D.c.project_id == project_id)).scalar()


def _default_rules(conf: Any) -> dict[str, dict[str, Any]]:
    """The four rules of a default group, from ``[default_fwg_rules]``."""
    o = conf.default_fwg_rules
    common = {"protocol": o.protocol, "enabled": o.enabled, "shared": o.shared}
    out = {}
    for direction in ("ingress", "egress"):
        for version in (4, 6):
            out[f"{direction}{version}"] = {
                **common, "name": f"default {direction} ipv{version}",
                "description": f"default {direction} rule for IPv{version}",
                "ip_version": version, "action": getattr(o, f"{direction}_action"),
                "source_port": getattr(o, f"{direction}_source_port"),
                "destination_port": getattr(o, f"{direction}_destination_port"),
                "source_ip_address": getattr(o, f"{direction}_source_ipv{version}_address"),
                "destination_ip_address":
                    getattr(o, f"{direction}_destination_ipv{version}_address")}
    return out


def make_default(conn: Connection, conf: Any, project_id: str) -> str:
    """The project's default group, made (with its policies and rules) when missing."""
    found = default_of(conn, project_id)
    if found:
        return found
    owner = Context(project_id=project_id, is_admin=True)
    made = {k: rules.create(conn, owner, {**r, "project_id": project_id})
            for k, r in _default_rules(conf).items()}
    ids = {}
    for direction, title in (("ingress", "Ingress"), ("egress", "Egress")):
        ids[direction] = policies.create(conn, owner, {
            "name": f"default {direction}", "description": f"{title} firewall policy",
            "project_id": project_id,
            "firewall_rules": [made[f"{direction}4"], made[f"{direction}6"]]}, default=True)
    row = store.standard_row(project_id, {"name": res.DEFAULT_FWG,
                                          "description": "Default firewall group"}, revision=0)
    row.update(shared=False, admin_state_up=True, status=res.INACTIVE,
               ingress_firewall_policy_id=ids["ingress"],
               egress_firewall_policy_id=ids["egress"])
    conn.execute(sa.insert(G).values(**row))
    conn.execute(sa.insert(D).values(project_id=project_id, firewall_group_id=row["id"]))
    return str(row["id"])


def join_default(conn: Connection, port: dict[str, Any]) -> str | None:
    """A newly bound instance port the L2 extension serves, in no group yet,
    joins its project's default group (upstream's plugin does this on the
    port's first binding); the group goes ``PENDING_UPDATE`` for its agent
    when it has policies, even while already pending (upstream's update
    would refuse it, and the port would be left out). The group's id, or
    None when the port stays as it is."""
    pid, project = str(port["id"]), port.get("project_id")
    if (not project or not str(port.get("device_owner") or "").startswith(res.COMPUTE_PREFIX)
            or not l2_supported(conn, pid)):
        return None
    gid = default_of(conn, str(project))
    if gid is None or conn.execute(sa.select(GP.c.port_id).where(GP.c.port_id == pid)).first():
        return None
    group = rows.row(conn, "firewall_groups", gid, for_update=True)
    conn.execute(sa.insert(GP).values(firewall_group_id=gid, port_id=pid))
    store.bump(conn, G, gid, {"status": _status([pid], {k: getattr(group, k)
                                                        for k in POLICY_KEYS},
                                                res.PENDING_UPDATE)})
    return gid
