"""The authorization matrix: every resource, action and persona, as data.

Personas: ``admin``; ``owner`` (a member of project A, which owns every
object below); ``reader`` (a reader of project A); ``other`` (a member of
project B, with nothing shared); ``target`` (a member of project C, to
which the ``shared_*`` objects are shared by an RBAC entry).

Each row of ``TABLE`` names an object kind and an action and gives the
outcome per persona: a status code; for ``list`` ``200+`` (listed) or
``200-`` (not listed); for ``see:<attr>`` ``Y`` (the attribute is in the
body of a show) or ``N``; for ``shared`` the caller's ``shared`` value.
``-`` skips a cell. Every expectation was observed on upstream Neutron 29:
``python -m tests.policy.test_matrix http://127.0.0.1:9797`` runs the same
table against a live server (noauth) and prints what it answered, in the
table's format, then deletes what it created.
"""
from __future__ import annotations

import itertools
import sys
import uuid
from typing import Any, Iterator

import pytest

from tests.conftest import Client, Server

PERSONAS = ("admin", "owner", "reader", "other", "target")

# kind              action                     admin owner reader other target
TABLE = """
network             create                     201   201   403   400   400
network             create:shared              201   403   403   400   400
network             create:provider            201   403   403   400   400
network             list                       200+  200+  200+  200-  200-
network             show                       200   200   200   404   404
network             see:provider:network_type  Y     N     N     404   404
network             see:provider:segmentation_id Y   N     N     404   404
network             shared                     False False False 404   404
network             update                     200   200   403   404   404
network             update:shared              200   403   403   404   404
network             update:provider            -     403   403   404   404
network             delete                     204   204   403   404   404
shared_network      list                       200+  200+  200+  200-  200+
shared_network      show                       200   200   200   404   200
shared_network      shared                     False False False 404   True
shared_network      update                     200   200   403   404   403
shared_network      delete                     -     -     403   404   403
shared_network      create_port                201   201   403   404   201
shared_network      create_port:ip_address     201   201   403   404   403
shared_network      create_port:mac_address    201   201   403   404   403
shared_network      create_subnet              201   201   403   403   403
subnet              create                     201   201   403   403   403
subnet              list                       200+  200+  200+  200-  200-
subnet              show                       200   200   200   404   404
subnet              update                     200   200   403   404   404
subnet              delete                     204   204   403   404   404
shared_subnet       list                       200+  200+  200+  200-  200+
shared_subnet       show                       200   200   200   404   200
shared_subnet       update                     200   200   403   404   403
shared_subnet       delete                     204   204   403   404   403
port                create                     201   201   403   404   404
port                create:binding:host_id     201   403   403   404   404
port                create:binding:profile     403   403   403   404   404
port                list                       200+  200+  200+  200-  200-
port                show                       200   200   200   404   404
port                see:binding:host_id        Y     N     N     404   404
port                see:binding:vif_type       Y     N     N     404   404
port                see:binding:vnic_type      Y     Y     Y     404   404
port                update                     200   200   403   404   404
port                update:binding:host_id     200   403   403   404   404
port                update:mac_address         -     403   403   404   404
port                delete                     204   204   403   404   404
target_port         list                       200+  200+  200+  200-  200+
target_port         show                       200   200   200   404   200
target_port         update                     200   403   403   404   200
target_port         delete                     204   204   403   404   204
subnetpool          create                     201   201   403   400   400
subnetpool          create:shared              201   403   403   400   400
subnetpool          create:is_default          -     403   403   400   400
subnetpool          list                       200+  200+  200+  200-  200-
subnetpool          show                       200   200   200   404   404
subnetpool          shared                     False False False 404   404
subnetpool          update                     200   200   403   404   404
subnetpool          update:is_default          -     403   403   404   404
subnetpool          delete                     204   204   403   404   404
subnetpool          add_prefixes               200   200   403   404   404
subnetpool          remove_prefixes            200   200   403   404   404
subnetpool          allocate                   201   201   403   404   404
shared_subnetpool   list                       200+  200+  200+  200-  200+
shared_subnetpool   show                       200   200   200   404   200
shared_subnetpool   shared                     False False False 404   True
shared_subnetpool   update                     200   200   403   404   403
shared_subnetpool   delete                     -     -     403   404   403
shared_subnetpool   add_prefixes               200   200   403   404   403
shared_subnetpool   remove_prefixes            200   200   403   404   403
shared_subnetpool   allocate                   201   201   403   404   201
rbac_policy         create                     201   201   403   400   400
rbac_policy         create:wildcard            201   403   403   403   403
rbac_policy         list                       200+  200+  200+  200-  200-
rbac_policy         show                       200   200   200   404   404
rbac_policy         update                     200   200   403   404   404
rbac_policy         update:wildcard            200   403   403   404   404
rbac_policy         delete                     204   204   403   404   404
quota               list                       200   403   403   403   403
quota               show                       200   200   200   403   403
quota               default                    200   200   200   403   403
quota               details                    200   200   200   403   403
quota               update                     200   403   403   403   403
quota               delete                     204   403   403   403   403
"""

TAGGED = ("network", "subnet", "port", "subnetpool", "shared_network")
# action        admin owner reader other target   (target: for shared_network)
TAG_TABLE = """
tags:list       200   200   200   403   403
tags:add        201   201   403   403   403
tags:replace    200   200   403   403   403
tags:remove     204   204   403   403   403
tags:clear      204   204   403   403   403
"""
# A shared network's tags are readable by the target; changing them is not.
TAG_TARGET = {("shared_network", "tags:list"): "200", ("shared_network", "tags:add"): "403",
              ("shared_network", "tags:replace"): "403",
              ("shared_network", "tags:remove"): "403",
              ("shared_network", "tags:clear"): "403"}

# (kind, action, persona) -> where neutrino knowingly differs from upstream.
# Cells where neutrino knowingly differs from upstream (none at present).
XFAIL: dict[tuple[str, str, str], str] = {}


def _rows() -> Iterator[tuple[str, str, str, str]]:
    for line in TABLE.strip().splitlines():
        kind, action, *cells = line.split()
        yield from ((kind, action, p, c) for p, c in zip(PERSONAS, cells, strict=True))
    for line in TAG_TABLE.strip().splitlines():
        action, *cells = line.split()
        for kind in TAGGED:
            for p, c in zip(PERSONAS, cells, strict=True):
                if p == "target":
                    c = TAG_TARGET.get((kind, action), c)
                yield kind, action, p, c


CASES = [c for c in _rows() if c[3] != "-"]


# -- the world every case acts on ------------------------------------------------

class World:
    """Projects A (owner), B (other), C (target) and A's objects.

    Networks are created by the admin for their project, with
    ``net_extra`` (on upstream: a VXLAN type, so that no VLAN is used).
    """

    def __init__(self, url: str, upstream: bool = False) -> None:
        self.upstream = upstream
        self.net_extra: dict[str, Any] = {"provider:network_type": "vxlan"} if upstream else {}
        self.provider_type = "vxlan" if upstream else "local"
        self.a, self.b, self.c = (uuid.uuid4().hex for _ in range(3))
        admin_roles = "admin,member,reader" if upstream else "admin"
        member_roles = "member,reader" if upstream else "member"
        self.clients = {
            "admin": Client(url, uuid.uuid4().hex, admin_roles),
            "owner": Client(url, self.a, member_roles),
            "reader": Client(url, self.a, "reader"),
            "other": Client(url, self.b, member_roles),
            "target": Client(url, self.c, member_roles),
        }
        self.project = {"admin": None, "owner": self.a, "reader": self.a,
                        "other": self.b, "target": self.c}
        self.created: list[tuple[str, str]] = []
        self._octet = itertools.count(1)
        self._objs: dict[str, dict[str, Any]] = {}
        self.last: Any = None
        self.unlimited()

    def unlimited(self) -> None:
        """Project A makes many objects; lift its quotas (the defaults allow 10 RBAC entries)."""
        status, body = self.admin.put(f"/v2.0/quotas/{self.a}", {"quota": {
            "rbac_policy": -1, "network": -1, "subnet": -1, "port": -1, "subnetpool": -1}})
        assert status == 200, body

    @property
    def admin(self) -> Client:
        return self.clients["admin"]

    # builders, all through the admin unless a persona is given
    def post(self, client: Client, plural: str, body: dict[str, Any]) -> tuple[int, Any]:
        status, data = client.post(f"/v2.0/{plural}", body)
        self.last = data
        if status == 201:
            key = next(iter(data))
            self.created.append((plural, data[key]["id"]))
        return status, data

    def make(self, plural: str, body: dict[str, Any], client: Client | None = None) -> dict[str, Any]:
        status, data = self.post(client or self.admin, plural, body)
        assert status == 201, (plural, body, data)
        return data[next(iter(data))]

    def cidr(self) -> str:
        n = next(self._octet)
        return f"10.{77 + n // 250}.{n % 250}.0/24"

    def network(self, project: str) -> dict[str, Any]:
        return self.make("networks", {"network": {"name": "matrix", "project_id": project,
                                                  **self.net_extra}})

    def subnet(self, net: dict[str, Any]) -> dict[str, Any]:
        return self.make("subnets", {"subnet": {"network_id": net["id"], "ip_version": 4,
                                                "cidr": self.cidr(),
                                                "project_id": net["project_id"]}})

    def pool(self) -> dict[str, Any]:
        n = next(self._octet)
        return self.make("subnetpools", {"subnetpool": {
            "name": "matrix", "prefixes": [f"172.{16 + n % 16}.{n // 16 % 256}.0/24"],
            "min_prefixlen": 24, "max_prefixlen": 28, "project_id": self.a}})

    def share(self, object_type: str, object_id: str, target: str) -> dict[str, Any]:
        return self.make("rbac-policies", {"rbac_policy": {
            "object_type": object_type, "object_id": object_id,
            "action": "access_as_shared", "target_tenant": target}},
            self.clients["owner"])

    def fresh(self, kind: str) -> dict[str, Any]:
        """A new object of ``kind``, for an action that consumes it."""
        if kind == "network":
            return self.network(self.a)
        if kind == "shared_network":
            net = self.network(self.a)
            self.share("network", net["id"], self.c)
            return net
        if kind == "subnet":
            return self.subnet(self.obj("network"))
        if kind == "shared_subnet":
            return self.subnet(self.obj("shared_network"))
        if kind == "port":
            return self.make("ports", {"port": {"network_id": self.obj("network")["id"]}},
                             self.clients["owner"])
        if kind == "target_port":
            return self.make("ports", {"port": {
                "network_id": self.obj("shared_network")["id"]}}, self.clients["target"])
        if kind == "subnetpool":
            return self.pool()
        if kind == "shared_subnetpool":
            pool = self.pool()
            self.share("subnetpool", pool["id"], self.c)
            return pool
        if kind == "rbac_policy":
            return self.share("network", self.network(self.a)["id"], uuid.uuid4().hex)
        if kind == "quota":
            return {"id": self.a}
        raise KeyError(kind)

    def obj(self, kind: str) -> dict[str, Any]:
        """The long-lived object of ``kind`` (created on first use)."""
        if kind not in self._objs:
            self._objs[kind] = self.fresh(kind)
            if kind == "shared_network":
                self.subnet(self._objs[kind])  # so that ports get addresses
        return self._objs[kind]

    def cleanup(self) -> None:
        order = ["ports", "rbac-policies", "subnets", "networks", "subnetpools"]
        for plural in order:
            for kind, rid in reversed(self.created):
                if kind == plural:
                    self.admin.delete(f"/v2.0/{plural}/{rid}")
        self.admin.delete(f"/v2.0/quotas/{self.a}")


# -- the actions -------------------------------------------------------------------

PLURAL = {"network": "networks", "shared_network": "networks", "subnet": "subnets",
          "shared_subnet": "subnets", "port": "ports", "target_port": "ports",
          "subnetpool": "subnetpools", "shared_subnetpool": "subnetpools",
          "rbac_policy": "rbac-policies", "quota": "quotas"}
SINGULAR = {"networks": "network", "subnets": "subnet", "ports": "port",
            "subnetpools": "subnetpool", "rbac-policies": "rbac_policy", "quotas": "quota"}
# Actions that consume or change their object for good act on a fresh one.
CONSUMING = {"delete", "remove_prefixes"}


def _consumes(action: str) -> bool:
    verb, _, extra = action.partition(":")
    return verb in CONSUMING or (verb == "update" and bool(extra))


def _create_body(w: World, kind: str, action: str, persona: str) -> tuple[str, dict[str, Any]]:
    extra = action.partition(":")[2]
    if kind == "network":
        body: dict[str, Any] = {"name": "matrix", "project_id": w.a}
        if persona == "admin":
            body.update(w.net_extra)
        if extra == "shared":
            body["shared"] = True
        if extra == "provider":
            body["provider:network_type"] = w.provider_type
        return "networks", body
    if kind == "subnet":
        body = {"network_id": w.obj("network")["id"], "ip_version": 4, "cidr": w.cidr()}
        return "subnets", body
    if kind == "port":
        body = {"network_id": w.obj("network")["id"]}
        if extra:
            body[extra] = "matrix-host" if extra == "binding:host_id" else {"a": "b"}
        return "ports", body
    if kind == "subnetpool":
        n = next(w._octet)
        body = {"name": "matrix", "prefixes": [f"192.168.{n % 256}.0/24"], "project_id": w.a}
        if extra:
            body[extra] = True
        return "subnetpools", body
    if kind == "rbac_policy":
        target = "*" if extra == "wildcard" else uuid.uuid4().hex
        return "rbac-policies", {"object_type": "network", "object_id": w.fresh("network")["id"],
                                 "action": "access_as_shared", "target_tenant": target}
    raise KeyError((kind, action))


def _shared_net_create(w: World, action: str) -> tuple[str, dict[str, Any]]:
    net = w.obj("shared_network")
    if action == "create_subnet":
        return "subnets", {"network_id": net["id"], "ip_version": 4, "cidr": w.cidr()}
    body: dict[str, Any] = {"network_id": net["id"]}
    if action.endswith(":mac_address"):
        body["mac_address"] = "fa:16:3e:%02x:%02x:%02x" % tuple(uuid.uuid4().bytes[:3])
    if action.endswith(":ip_address"):
        status, sub = w.admin.get(f"/v2.0/subnets?network_id={net['id']}")
        cidr = sub["subnets"][0]["cidr"]
        # An address no port holds now: other cells' ports take random ones.
        taken = {ip["ip_address"] for p in w.admin.get(
            f"/v2.0/ports?network_id={net['id']}")[1]["ports"] for ip in p["fixed_ips"]}
        free = next(a for a in (cidr.rsplit(".", 1)[0] + f".{n}" for n in range(20, 250))
                    if a not in taken)
        body["fixed_ips"] = [{"subnet_id": sub["subnets"][0]["id"], "ip_address": free}]
    return "ports", body


def _update_body(w: World, kind: str, action: str) -> dict[str, Any]:
    extra = action.partition(":")[2]
    if kind == "rbac_policy":
        return {"target_tenant": "*" if extra == "wildcard" else uuid.uuid4().hex}
    if extra == "shared":
        return {"shared": True}
    if extra == "provider":
        return {"provider:segmentation_id": 4000}
    if extra == "is_default":
        return {"is_default": True}
    if extra == "binding:host_id":
        return {"binding:host_id": "matrix-host"}
    if extra == "mac_address":
        return {"mac_address": "fa:16:3e:00:00:01"}
    return {"name": "matrix-renamed"}


def run(w: World, kind: str, action: str, persona: str) -> str:
    """Perform one cell and describe its outcome in the table's terms."""
    c = w.clients[persona]
    verb = action.partition(":")[0]
    if kind == "quota":
        return _quota(w, c, action)
    if verb == "create" or (kind == "shared_network" and verb.startswith("create_")):
        plural, body = (_shared_net_create(w, action) if kind == "shared_network"
                        else _create_body(w, kind, action, persona))
        status, _ = w.post(c, plural, {SINGULAR[plural]: body})
        return str(status)
    plural = PLURAL[kind]
    obj = w.fresh(kind) if _consumes(action) else w.obj(kind)
    path = f"/v2.0/{plural}/{obj['id']}"
    if verb == "list":
        status, body = c.get(f"/v2.0/{plural}")
        if status != 200:
            return str(status)
        return "200+" if obj["id"] in {x["id"] for x in body[plural.replace("-", "_")]} else "200-"
    if verb in ("show", "see", "shared"):
        status, body = c.get(path)
        if status != 200:
            return str(status)
        item = body[SINGULAR[plural]]
        if verb == "see":
            return "Y" if action.partition(":")[2] in item else "N"
        return str(item["shared"]) if verb == "shared" else "200"
    if verb == "update":
        return str(c.put(path, {SINGULAR[plural]: _update_body(w, kind, action)})[0])
    if verb == "delete":
        return str(c.delete(path)[0])
    if verb in ("add_prefixes", "remove_prefixes"):
        prefix = obj["prefixes"][0] if verb == "remove_prefixes" else \
            f"172.31.{next(w._octet) % 256}.0/24"
        return str(c.put(f"{path}/{verb}", {"prefixes": [prefix]})[0])
    if verb == "allocate":
        net = w.network(w.project[persona] or w.a)
        status, _ = w.post(c, "subnets", {"subnet": {
            "network_id": net["id"], "ip_version": 4, "subnetpool_id": obj["id"],
            "prefixlen": 28}})
        return str(status)
    if verb == "tags":
        return _tags(w, c, path, action.partition(":")[2])
    raise KeyError((kind, action))


def _tags(w: World, c: Client, path: str, op: str) -> str:
    tag = f"t{uuid.uuid4().hex[:8]}"
    if op == "list":
        return str(c.get(f"{path}/tags")[0])
    if op == "add":
        return str(c.put(f"{path}/tags/{tag}")[0])
    if op == "replace":
        return str(c.put(f"{path}/tags", {"tags": [tag]})[0])
    w.admin.put(f"{path}/tags/{tag}")
    if op == "remove":
        return str(c.delete(f"{path}/tags/{tag}")[0])
    return str(c.delete(f"{path}/tags")[0])


def _quota(w: World, c: Client, action: str) -> str:
    path = f"/v2.0/quotas/{w.a}"
    if action == "list":
        return str(c.get("/v2.0/quotas")[0])
    if action == "show":
        return str(c.get(path)[0])
    if action in ("default", "details"):
        return str(c.get(f"{path}/{action}")[0])
    if action == "update":
        return str(c.put(path, {"quota": {"network": 100}})[0])
    if action == "delete":
        status = c.delete(path)[0]
        w.unlimited()
        return str(status)
    raise KeyError(action)


# -- the tests ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def world(server: Server) -> World:
    return World(server.url)


def _param(case: tuple[str, str, str, str]) -> Any:
    kind, action, persona, expected = case
    marks = []
    reason = XFAIL.get((kind, action, persona))
    if reason:
        marks.append(pytest.mark.xfail(strict=True, reason=reason))
    return pytest.param(kind, action, persona, expected, marks=marks,
                        id=f"{kind}-{action}-{persona}")


@pytest.mark.parametrize("kind,action,persona,expected", [_param(c) for c in CASES])
def test_matrix(world: World, kind: str, action: str, persona: str, expected: str) -> None:
    assert run(world, kind, action, persona) == expected


def test_table_is_well_formed() -> None:
    assert len(CASES) == len({c[:3] for c in CASES})
    for kind, _action, persona, expected in CASES:
        assert kind in PLURAL and persona in PERSONAS
        assert expected in {"Y", "N", "True", "False", "200+", "200-"} or expected.isdigit()


def main(url: str) -> None:
    """Run the table against a live server and print its answers in table form."""
    w = World(url, upstream=True)
    send = Client.req

    def req(self: Client, *args: Any, **kw: Any) -> Any:
        w.last = send(self, *args, **kw)
        return w.last
    Client.req = req  # type: ignore[method-assign]
    try:
        seen: dict[tuple[str, str], dict[str, str]] = {}
        for kind, action, persona, expected in _rows():
            got = run(w, kind, action, persona) if expected != "-" else "-"
            seen.setdefault((kind, action), {})[persona] = got
            if got != expected:
                print(f"# DIFF {kind} {action} {persona}: table {expected}, server {got} "
                      f"{str(w.last)[:200]}",
                      file=sys.stderr)
        for (kind, action), cells in seen.items():
            print(f"{kind:<19} {action:<26} " + " ".join(f"{cells[p]:<5}" for p in PERSONAS))
    finally:
        w.cleanup()


if __name__ == "__main__":
    main(sys.argv[1])
