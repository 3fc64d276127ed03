"""A load balancer's stored objects as the API shows them and as its
provider receives them (``resources.lb_graph``)."""
from __future__ import annotations

import datetime as dt
from typing import Any

from neutrino.resources import lb_graph as g
from neutrino.resources import octavia as res


class Objects:
    """The objects of one or more load balancers, indexed for the views."""

    def __init__(self, objs: list[dict[str, Any]]) -> None:
        self.all = objs
        self.by_id = {o["id"]: o for o in objs}
        self.children: dict[str | None, list[dict[str, Any]]] = {}
        self.of_lb: dict[str, list[dict[str, Any]]] = {}
        for o in sorted(objs, key=lambda x: (x["created_at"], x["id"])):
            self.children.setdefault(o["parent_id"], []).append(o)
            self.of_lb.setdefault(o["loadbalancer_id"], []).append(o)

    def kids(self, parent_id: str, kind: str) -> list[dict[str, Any]]:
        return [o for o in self.children.get(parent_id, []) if o["kind"] == kind]

    def in_lb(self, lb_id: str, kind: str) -> list[dict[str, Any]]:
        return [o for o in self.of_lb.get(lb_id, []) if o["kind"] == kind]

    def policies(self, listener_id: str) -> list[dict[str, Any]]:
        return sorted(self.kids(listener_id, "l7policy"), key=lambda p: p["position"])

    def healthmonitor(self, pool_id: str) -> dict[str, Any] | None:
        found = self.kids(pool_id, "healthmonitor")
        return found[0] if found else None

    def pool_listeners(self, pool: dict[str, Any]) -> list[dict[str, Any]]:
        return [x for x in self.in_lb(pool["loadbalancer_id"], "listener")
                if x.get("default_pool_id") == pool["id"]]


def _time(value: Any) -> str | None:
    if isinstance(value, dt.datetime):
        return value.strftime("%Y-%m-%dT%H:%M:%S")
    return value  # type: ignore[no-any-return]


def _ids(objs: list[dict[str, Any]]) -> list[dict[str, str]]:
    return [{"id": o["id"]} for o in objs]


def view(obj: dict[str, Any], objs: Objects) -> dict[str, Any]:
    """The object as Octavia answers it, attributes in Octavia's order."""
    kind = obj["kind"]
    rdef = res.OBJECTS[kind]
    extra: dict[str, Any] = {"tenant_id": obj["project_id"],
                             "created_at": _time(obj["created_at"]),
                             "updated_at": _time(obj["updated_at"])}
    if kind == "loadbalancer":
        extra["listeners"] = _ids(objs.in_lb(obj["id"], "listener"))
        extra["pools"] = _ids(objs.in_lb(obj["id"], "pool"))
    elif kind == "listener":
        extra["l7policies"] = _ids(objs.policies(obj["id"]))
        extra["loadbalancers"] = [{"id": obj["loadbalancer_id"]}]
    elif kind == "pool":
        extra["loadbalancers"] = [{"id": obj["loadbalancer_id"]}]
        extra["listeners"] = _ids(objs.pool_listeners(obj))
        extra["members"] = _ids(objs.kids(obj["id"], "member"))
        hm = objs.healthmonitor(obj["id"])
        extra["healthmonitor_id"] = hm["id"] if hm else None
    elif kind == "healthmonitor":
        extra["pools"] = [{"id": obj["parent_id"]}]
    elif kind == "l7policy":
        extra["rules"] = _ids(objs.kids(obj["id"], "l7rule"))
        extra["listener_id"] = obj["parent_id"]
    out = {}
    for name in rdef.shown:
        out[name] = extra[name] if name in extra else obj.get(name)
    if kind == "pool" and out["healthmonitor_id"] is None:
        del out["healthmonitor_id"]  # as Octavia, while no monitor is attached
    return out


def status_tree(lb: dict[str, Any], objs: Objects) -> dict[str, Any]:
    """``GET /loadbalancers/{id}/status``: listeners, their pools (default
    and L7 redirect pools), each pool's monitor and members."""
    def st(o: dict[str, Any], *names: str) -> dict[str, Any]:
        out = {"id": o["id"], "name": o.get("name", "")}
        for n in names:
            out[n] = o.get(n)
        out["operating_status"] = o["operating_status"]
        out["provisioning_status"] = o["provisioning_status"]
        return out

    def pool_status(pool: dict[str, Any]) -> dict[str, Any]:
        out = st(pool)
        hm = objs.healthmonitor(pool["id"])
        if hm is not None:
            out["health_monitor"] = st(hm, "type")
        out["members"] = [st(m, "address", "protocol_port")
                          for m in objs.kids(pool["id"], "member")]
        return out

    listeners = []
    for listener in objs.in_lb(lb["id"], "listener"):
        pool_ids = []
        if listener.get("default_pool_id"):
            pool_ids.append(listener["default_pool_id"])
        for pol in objs.policies(listener["id"]):
            if pol.get("redirect_pool_id") and pol["redirect_pool_id"] not in pool_ids:
                pool_ids.append(pol["redirect_pool_id"])
        item = st(listener)
        item["pools"] = [pool_status(objs.by_id[p]) for p in pool_ids if p in objs.by_id]
        listeners.append(item)
    top = st(lb)
    top["listeners"] = listeners
    return {"statuses": {"loadbalancer": top}}


def build(lb: dict[str, Any], objs: Objects) -> g.LoadBalancer:
    """The provider's plain-data graph of ``lb``."""
    def listener(x: dict[str, Any]) -> g.Listener:
        pols = tuple(_make(g.L7Policy, p, listener_id=x["id"], rules=tuple(
            _make(g.L7Rule, r, l7policy_id=p["id"]) for r in objs.kids(p["id"], "l7rule")))
            for p in objs.policies(x["id"]))
        return _make(g.Listener, x, l7policies=pols,
                     insert_headers=dict(x.get("insert_headers") or {}))

    def pool(p: dict[str, Any]) -> g.Pool:
        hm = objs.healthmonitor(p["id"])
        return _make(g.Pool, p,
                     listener_ids=tuple(x["id"] for x in objs.pool_listeners(p)),
                     members=tuple(_make(g.Member, m, pool_id=p["id"])
                                   for m in objs.kids(p["id"], "member")),
                     healthmonitor=_make(g.HealthMonitor, hm, pool_id=p["id"]) if hm else None)

    vip = g.Vip(address=lb["vip_address"], port_id=lb["vip_port_id"],
                subnet_id=lb.get("vip_subnet_id"), network_id=lb["vip_network_id"],
                qos_policy_id=lb.get("vip_qos_policy_id"),
                sg_ids=tuple(lb.get("vip_sg_ids") or ()))
    return _make(g.LoadBalancer, lb, vip=vip,
                 additional_vips=tuple(lb.get("additional_vips") or ()),
                 flavor=dict(lb.get("flavor_data") or {}),
                 availability_zone=dict(lb.get("availability_zone_data") or {}),
                 listeners=tuple(listener(x) for x in objs.in_lb(lb["id"], "listener")),
                 pools=tuple(pool(p) for p in objs.in_lb(lb["id"], "pool")))


def _make(cls: Any, obj: dict[str, Any], **given: Any) -> Any:
    data = {k: v for k, v in obj.items() if v is not None}
    data["name"] = obj.get("name") or ""
    data.update(given)
    return g.build_from(cls, data)
