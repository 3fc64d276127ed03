"""The core plugin: networks, subnets, ports and subnet pools on SQL.

Each operation is one transaction, retried as a whole when it lost a race;
bulk creates are one transaction too, so a failing item leaves nothing
behind. Resource modules hold the behaviour; this class only routes to them.
"""
from __future__ import annotations

import logging
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Sequence, TypeVar

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino import errors
from neutrino.context import Context
from neutrino.db import lookups, writes
from neutrino.db import tables as t
from neutrino.db.engine import Database, retrying
from neutrino.plugins import events as ev
from neutrino.plugins import row_memo, store
from neutrino.plugins.address_groups import AddressGroups
from neutrino.plugins.address_scopes import AddressScopes
from neutrino.plugins.agents import Agents, AvailabilityZones
from neutrino.plugins.base import ApiExtension
from neutrino.plugins.handler import Handler, ResourceHandler
from neutrino.plugins.joined import Joined
from neutrino.plugins.ml2 import bindings_extended
from neutrino.plugins.ml2.agent_notifier import AgentNotifier
from neutrino.plugins.ml2.extension_api import ExtensionDriver
from neutrino.plugins.ml2.extension_manager import ExtensionManager
from neutrino.plugins.ml2.l2pop import L2Population
from neutrino.plugins.ml2.managers import TypeManager
from neutrino.plugins.ml2.mech_calls import MechanismCalls
from neutrino.plugins.ml2.mech_manager import MechanismManager
from neutrino.plugins.ml2.port_attribute import (
    PortDeviceProfileDriver,
    PortNumaAffinityPolicyDriver,
)
from neutrino.plugins.ml2.port_binding import PortBinding
from neutrino.plugins.ml2.port_security_groups import PortSecurityGroupsDriver
from neutrino.plugins.ml2.vo_rpc import VersionedObjectPusher
from neutrino.plugins.networks import Networks
from neutrino.plugins.ports import Ports
from neutrino.plugins.rbac import (
    CALLER,
    RbacPolicies,
    is_external_clause,
    network_access_clause,
    shared_clause,
    targets,
)
from neutrino.plugins.security_groups import SecurityGroups
from neutrino.plugins.sg_default_rules import DefaultSecurityGroupRules
from neutrino.plugins.sg_rules import SecurityGroupRules
from neutrino.plugins.sg_statefulness import DefaultStatefulness
from neutrino.plugins.subnetpools import SubnetPools
from neutrino.plugins.subnets import Subnets
from neutrino.resources import agents, security_groups
from neutrino.resources.address_scope import ADDRESS_SCOPE
from neutrino.resources.attributes import extend
from neutrino.resources.rbac import RBAC_POLICY
from neutrino.rpc import topics
from neutrino.rpc.casts import Casts

T = TypeVar("T")
HOST_ID = "binding:host_id"
LOG = logging.getLogger(__name__)

# ``networks_of``: built once, it runs for the policy target of most
# requests on ports and subnets.
_NETWORKS_OF = (sa.select(t.networks.c.id, t.networks.c.project_id,
                          shared_clause(CALLER, t.networks.c.id).label("shared"),
                          is_external_clause(t.networks.c.id).label("external"),
                          network_access_clause(CALLER, t.networks.c.id).label("reached"))
                .where(t.networks.c.id.in_(sa.bindparam("ids", expanding=True))))

CORE_ALIASES = (
    "project-id", "standard-attr-description", "standard-attr-timestamp",
    "standard-attr-revisions", "standard-attr-tag", "tag-creation", "revision-if-match",
    "pagination", "sorting", "filter-validation", "empty-string-filtering",
    "ip-substring-filtering", "subnet_allocation", "default-subnetpools",
    "subnetpool-prefix-ops", "allowed-address-pairs", "aap-reject-multicast",
    "subnet-service-types", "subnet_onboard",
    "extra_dhcp_opt", "net-mtu", "port-mac-address-regenerate", "port-mac-override",
    "net-mtu-writable", "provider", "multi-provider", "rbac-policies",
    "rbac-subnetpool", "external-net", "subnet-external-network",
    "agent", "agent-resources-synced", "agent_sort_key", "availability_zone",
    "availability_zone_filter", "address-scope", "rbac-address-scope",
    # Security groups are part of the ML2 core, as upstream.
    "security-group", "address-group", "security-groups-remote-address-group",
    "security-groups-normalized-cidr", "stateful-security-group",
    "port-security-groups-filtering", "security-groups-rules-belongs-to-default-sg",
    "security-groups-default-rules", "security-groups-default-statefulness",
    "rbac-security-groups", "rbac-address-group", "security-groups-shared-filtering",
)


class CorePlugin:
    """Routes API operations on core collections to their resource modules."""

    supported_extension_aliases = CORE_ALIASES

    def __init__(self, conf: Any, db: Database) -> None:
        self.conf = conf
        self.db = db
        self._quota: Any = None  # a QuotaEngine, set by the service assembly
        self.events = ev.Events()  # service plugins' say in core transactions
        self.type_manager = TypeManager(conf)  # refuses bad ML2 options
        self.extensions = ExtensionManager(conf)
        self.mechanisms = MechanismManager(conf)  # refuses unknown driver names
        self.security_groups = SecurityGroups(db, self._write)
        # Ports' groups after port security (whose answer they need), before binding.
        self.extensions.drivers.append(PortSecurityGroupsDriver(conf, self.security_groups))
        # Upstream's ML2 always lists these aliases: their drivers are always
        # loaded here (naming them in [ml2] extension_drivers adds nothing).
        for always in (PortNumaAffinityPolicyDriver, PortDeviceProfileDriver):
            if not any(isinstance(d, always) for d in self.extensions.drivers):
                self.extensions.drivers.append(always(conf))
        # Binding runs last among the extension drivers: it sees the port complete.
        binding = PortBinding(conf, self.mechanisms, self.type_manager, self.load_ports)
        self.extensions.drivers.append(binding)
        self.ml2 = MechanismCalls(self.mechanisms, binding)
        self.supported_extension_aliases = CORE_ALIASES + tuple(self.extensions.aliases)
        # The collections the extension drivers add attributes to: an update
        # of one reads the resource first, and the drivers learn the old state from it.
        self._extended = frozenset(self.extensions.attributes())
        pools = SubnetPools()
        networks, ports = Networks(conf, self.type_manager), Ports(conf)
        self._networks, self._ports = networks, ports
        self.handlers: dict[str, ResourceHandler] = {
            "networks": networks,
            "subnets": Subnets(conf, pools),
            "ports": ports,
            "subnetpools": pools,
            "rbac_policies": RbacPolicies(),
            "agents": Agents(conf),
            "availability_zones": AvailabilityZones(),
            "address_scopes": AddressScopes(),
            "security_groups": self.security_groups,
            "security_group_rules": SecurityGroupRules(self.security_groups),
            "address_groups": AddressGroups(),
            "default_security_group_rules": DefaultSecurityGroupRules(),
            "security_groups_default_statefulness": DefaultStatefulness(),
        }
        self._read_with_rows()
        self._subscribe_notifiers()

    def _read_with_rows(self) -> None:
        """The extension drivers' tables read with the rows of the
        collections they extend (``plugins/joined.py``)."""
        networks, ports = self._networks, self._ports
        networks.joined = self.extensions.joined("networks")
        ports.joined = self.extensions.joined("ports")
        ports.network_joined = tuple(
            j for j in self.extensions.joined("networks") if isinstance(j, Joined))

    def api_extensions(self) -> list[ApiExtension]:
        """The core's extensions served by routes of their own."""
        return [bindings_extended.extension(
            bindings_extended.BindingsExtended(self, self.ml2.binding, self.casts))]

    def add_extension_driver(self, driver: ExtensionDriver) -> None:
        """A service plugin's attributes of core resources, written in the
        core's transactions (``network_ha``); binding stays the last driver."""
        self.extensions.drivers.insert(len(self.extensions.drivers) - 1, driver)
        self._read_with_rows()

    def _subscribe_notifiers(self) -> None:
        """Agents (and l2population) hear about committed changes over the bus
        (the compute service's notifier is subscribed by ``neutrino.service``)."""
        self.casts = Casts(self.conf)
        AgentNotifier(self.conf, self.db, self.casts).subscribe(self.events)
        # upstream's agents: their caches of versioned objects
        self.vo_pusher = VersionedObjectPusher(self, self.casts)
        self.vo_pusher.subscribe(self.events)
        self.l2pop = None
        if any(d.name == "l2population" for d in self.mechanisms.drivers):
            self.l2pop = L2Population(self.db, self.casts)
            self.l2pop.subscribe(self.events)

    @property
    def quota(self) -> Any:
        return self._quota

    @quota.setter
    def quota(self, engine: Any) -> None:
        """Security groups need it too: a new group's rules must fit the quota."""
        self._quota = engine
        self.security_groups.quota = engine

    def initialize(self) -> None:
        """Start-up work on the database, once per server before workers fork:
        segment pools follow the configured ranges."""
        self.type_manager.sync_allocations(self.db)

    def rpc_endpoints(self) -> dict[str, list[Any]]:
        """What agents call on the server, by topic (served by the RPC process)."""
        # deferred: endpoints load oslo.messaging, which API workers never import
        from neutrino.plugins.ml2.dvr_rpc import DvrEndpoint
        from neutrino.plugins.ml2.metadata_rpc import MetadataEndpoint
        from neutrino.plugins.ml2.rpc import L2Endpoint
        from neutrino.plugins.ml2.sg_rpc import SecurityGroupEndpoint
        from neutrino.plugins.ml2.tunnel_rpc import TunnelEndpoint
        from neutrino.plugins.ml2.vo_pull_rpc import VersionedObjectsEndpoint
        return {topics.PLUGIN: [L2Endpoint(self), SecurityGroupEndpoint(self),
                                TunnelEndpoint(self), MetadataEndpoint(self),
                                DvrEndpoint(self), VersionedObjectsEndpoint(self)]}

    def _handler(self, plural: str) -> ResourceHandler:
        return self.handlers[plural]

    def use_policy(self, policy: Any) -> None:
        """The API's policy engine: who may cause a default security group."""
        self.security_groups.policy = policy

    def security_group_owners(self, group_ids: list[str]) -> dict[str, str]:
        """Owner of each security group (policy targets of rules), in bulk."""
        return self.security_groups.owners(group_ids)

    def extend_resources(self, resources: dict[str, Any]) -> None:
        """Add the extension drivers' attributes to the resource definitions,
        and the collections the core serves besides the four core resources."""
        for rdef in (RBAC_POLICY, agents.AGENT, agents.AVAILABILITY_ZONE, ADDRESS_SCOPE,
                     *security_groups.RESOURCES):
            resources.setdefault(rdef.plural, rdef.copy())
        extend(resources, self.extensions.attributes())

    def add_joined(self, plural: str, reads: Sequence[Any]) -> None:
        """An API extension's reads of its attribute, for the resources whose
        single-row read takes them (``AttributeHandler.joined``)."""
        if reads:
            handler: Any = self.handlers[plural]  # networks or ports
            handler.joined = (*handler.joined, *reads)

    # -- reads inside a caller's transaction (RPC endpoints) ----------------------

    def completed(self, conn: Connection, plural: str,
                  items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Items a caller read from their rows (``ports.to_dicts``), completed
        with the extension drivers' attributes, as the API shows them."""
        self.extensions.extend(conn, plural, items)
        return items

    def _load_one(self, conn: Connection, plural: str, rid: str) -> dict[str, Any]:
        return self._fetch(conn, plural, [rid])[0]

    def load_ports(self, conn: Connection, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Ports by id (those that exist), as an internal load reads each, but
        read as pages (``store.chunks``): a batch per table instead of a load
        per port (the L2 agents' device calls name a hundred ports or more)."""
        if len(ids) == 1:  # one port: a show's single-row read, not a page's reads
            try:
                return {ids[0]: self._load_one(conn, "ports", ids[0])}
            except errors.NotFound:
                return {}
        out: dict[str, dict[str, Any]] = {}
        handler = self.handlers["ports"]
        for part in store.chunks(ids):
            query = store.ListQuery(filters={"id": list(part)})
            items, _ = handler.list(conn, Context.admin(), query)
            out.update((item["id"], item) for item in self.completed(conn, "ports", items))
        return out

    def _fetch(self, conn: Connection, plural: str, ids: list[str],
               ctx: Context | None = None) -> list[dict[str, Any]]:
        """Resources by id as ``ctx`` sees them (None: an internal load). A
        handler whose resources depend on who asks (``shared``) reads them
        for the caller itself (``get_for``), from what it read with their
        rows; the others' ``get`` is the same for everyone."""
        handler = self._handler(plural)
        return self.completed(conn, plural, [handler.get_for(conn, i, ctx) for i in ids])

    def write(self, fn: Callable[[Connection], T]) -> T:
        """Run ``fn(conn)`` in one writer transaction, rerun on a lost race."""
        return self._write(fn)

    def reads_together(self) -> Any:
        """One read transaction shared by the reads inside the block, of any
        plugin: an API request's lookups see one state (``Database.reads_together``)."""
        return self.db.reads_together()

    def _write(self, fn: Callable[[Any], T]) -> T:
        @retrying
        def run() -> T:
            with row_memo.write_attempt(), self.db.writer() as conn:
                return fn(conn)
        return run()

    # -- CRUD ------------------------------------------------------------------

    def create(self, ctx: Context, plural: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        handler = self._handler(plural)
        ml2 = self.ml2.wants("create", plural)

        reads, params = self._create_lookups(plural, ctx, items)

        def op(conn: Connection) -> tuple[list[dict[str, Any]], list[Any]]:
            with lookups.together(conn, reads, params), writes.tracked() as written:
                if len(items) == 1:  # reads sent ahead (db/pipeline.py)
                    handler.ahead(conn, items[0])
                self._enforce_quota(conn, ctx)
                handler.before_create(conn, ctx, items)  # checks across a bulk request's items
                ids = []
                for item in items:
                    rid = handler.create(conn, ctx, item)
                    self.extensions.process_create(conn, ctx, plural, item, rid)
                    ids.append(rid)
            with store.fresh(set(ids), written), row_memo.answering():
                created = self._fetch(conn, plural, ids, ctx)
            for item in created if self.events.wants(plural, ev.PRECOMMIT_CREATE) else ():
                self.events.notify(plural, ev.PRECOMMIT_CREATE, conn, ctx, item)
            contexts = [self.ml2.context(conn, plural, c) for c in created] if ml2 else []
            for context in contexts:
                self.ml2.precommit("create", plural, context)
            return created, contexts
        created, contexts = self._write(op)
        try:
            for context in contexts:
                self.ml2.postcommit("create", plural, context)
        except Exception:
            # Upstream's contract: what a driver could not complete is undone.
            for item in reversed(created):
                try:
                    self.delete(ctx, plural, item["id"])
                except Exception:  # noqa: BLE001 - report the driver's error, not this
                    LOG.exception("could not undo create of %s %s", plural, item["id"])
            raise
        self.events.notify_many(plural, ev.AFTER_CREATE, [(ctx, item) for item in created])
        return created

    def _create_lookups(self, plural: str, ctx: Context,
                        items: list[dict[str, Any]]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The single-value reads a create of one project will make (its quota
        limit, what its extension drivers look up), to be read in one round
        trip, and their parameters; none for a create across projects."""
        projects = set(ctx.quota_request) or {item.get("project_id") for item in items}
        if len(projects) != 1 or None in projects:
            return (), {}
        project = projects.pop()
        reads, params = ((), {}) if self.quota is None else self.quota.lookups(
            ctx.quota_request.get(project, {}))
        handler = self._handler(plural)
        own, more = (handler.lookups(items[0]) if len(items) == 1 and isinstance(handler, Handler)
                     else ((), {}))
        return ((*reads, *self.extensions.lookups(plural), *own),
                {**params, **more, "project": project})

    def _enforce_quota(self, conn: Connection, ctx: Context) -> None:
        """The quota hook's reservation, checked inside the create's transaction."""
        if self.quota is None:
            return
        for project, deltas in sorted(ctx.quota_request.items()):
            self.quota.enforce(conn, project, deltas)

    def get(self, ctx: Context, plural: str, rid: str) -> dict[str, Any]:
        with self.db.reader() as conn:
            return self._fetch(conn, plural, [rid], ctx)[0]

    def list(self, ctx: Context, plural: str, query: store.ListQuery) -> tuple[list[dict[str, Any]], bool]:
        handler = self._handler(plural)
        query.extra.extend(self.extensions.filter_clauses(plural, handler.table, query.filters))
        handler.before_list(ctx, query)  # e.g. making the project's default security group
        with self.db.reader() as conn:
            items, more = handler.list(conn, ctx, query)
            self.extensions.extend(conn, plural, items)
            return items, more

    def update(self, ctx: Context, plural: str, rid: str, data: dict[str, Any],
               revision: int | None = None, seen: dict[str, Any] | None = None) -> dict[str, Any]:
        """``seen``: the resource as the request's policy read found it
        (``_as_seen``)."""
        handler = self._handler(plural)
        extended = plural in self._extended

        def apply(conn: Connection, original: dict[str, Any] | None) -> None:
            handler.update(conn, ctx, rid, data, revision)
            if extended:
                self.extensions.process_update(conn, ctx, plural, data, rid, original)
        return self.update_with(ctx, plural, rid, data, apply, needs_original=extended, seen=seen)

    @contextmanager
    def _as_seen(self, conn: Connection, plural: str, rid: str,
                 seen: dict[str, Any] | None) -> Iterator[dict[str, Any] | None]:
        """``seen`` (the resource as the request's read for policy found it,
        in a transaction of its own) when the resource's row, locked now,
        still has the revision it showed: for a handler whose resources
        change only with their row's revision (``follows_revision``) it is
        the resource the transaction would read again, so it does not. The
        lock is then the handler's own (``store.locked_ahead``): one
        statement where there were two. None: the transaction reads it.

        The request's read is the resource as its caller sees it, as
        upstream's drivers get it (``get_network`` with the caller's
        context): a network's ``shared`` counts the caller's own entries."""
        handler = self._handler(plural)
        if seen is None or not (isinstance(handler, Handler) and handler.follows_revision(seen)):
            yield None
            return
        row = store.lock_row(conn, handler.table, rid, self._not_found(plural, rid))
        with store.locked_ahead(handler.table, row):
            yield dict(seen) if row.revision_number == seen.get("revision_number") else None

    def update_with(self, ctx: Context, plural: str, rid: str, data: dict[str, Any],
                    apply: Callable[[Connection, dict[str, Any] | None], None],
                    needs_original: bool = True,
                    seen: dict[str, Any] | None = None) -> dict[str, Any]:
        """An update whose writes ``apply(conn, original)`` makes, with what
        every update has around them: the subscribers' and drivers' say
        before the commit, their news after it. ``data`` is what the update
        is said to change. Besides ``update``, a port's binding activated
        (``binding-extended``) is one. ``seen``: as ``update``'s."""
        ml2 = self.ml2.wants("update", plural)
        notify = self.events.wants(plural, ev.PRECOMMIT_UPDATE)
        updated = self.events.wants(plural, ev.PRECOMMIT_UPDATED)
        after = self.events.wants(plural, ev.AFTER_UPDATE)
        wanted = needs_original or ml2 or notify or updated or after

        def op(conn: Connection) -> tuple[dict[str, Any], Any, Any]:
            with self._as_seen(conn, plural, rid, seen if wanted else None) as known:
                original = known
                if original is None and wanted:
                    original = self._load_one(conn, plural, rid)
                if notify:
                    self.events.notify(plural, ev.PRECOMMIT_UPDATE, conn, ctx, original, data)
                apply(conn, original)
            with row_memo.answering():
                current = self._load_one(conn, plural, rid)
            if updated:
                self.events.notify(plural, ev.PRECOMMIT_UPDATED, conn, ctx, original, current)
            if not ml2:
                return current, None, original
            context = self.ml2.context(conn, plural, current, original)
            self.ml2.precommit("update", plural, context)
            return current, context, original
        current, context, original = self._write(op)
        if context is not None:
            self.ml2.postcommit("update", plural, context)
        if after:
            self.events.notify(plural, ev.AFTER_UPDATE, ctx, original, current)
        return current

    def bind_ports(self, ctx: Context, port_ids: Sequence[str],
                   host: str) -> dict[str, dict[str, Any]]:
        """Each of ``port_ids`` updated to ``binding:host_id`` ``host``, as
        ``update`` does it for one (the ML2 binding, the subscribers' and
        drivers' say, the news once committed), all in one transaction
        whose statements are shared by the ports: an L3 agent's first sync
        binds every port of its routers at once. Ports gone meanwhile are
        left out of the answer: the ports as bound, by id."""
        handler = self._ports
        ml2 = self.ml2.wants("update", "ports")
        notify = self.events.wants("ports", ev.PRECOMMIT_UPDATE)
        updated = self.events.wants("ports", ev.PRECOMMIT_UPDATED)

        def op(conn: Connection) -> tuple[dict[str, Any], dict[str, Any], list[Any]]:
            rows = handler.lock_many(conn, port_ids)
            originals = self.load_ports(conn, [row.id for row in rows])
            changes = {pid: {HOST_ID: host} for pid in originals}
            for pid in changes if notify else ():
                self.events.notify("ports", ev.PRECOMMIT_UPDATE, conn, ctx, originals[pid],
                                   changes[pid])
            handler.move_many(conn, rows, host,
                              {pid: port[HOST_ID] for pid, port in originals.items()})
            self.extensions.process_update_many(conn, ctx, "ports", changes, originals)
            with row_memo.answering():
                current = self.load_ports(conn, list(originals))
            for pid in current if updated else ():
                self.events.notify("ports", ev.PRECOMMIT_UPDATED, conn, ctx, originals[pid],
                                   current[pid])
            contexts = [self.ml2.context(conn, "ports", current[pid], originals[pid])
                        for pid in current] if ml2 else []
            for context in contexts:
                self.ml2.precommit("update", "ports", context)
            return originals, current, contexts
        originals, current, contexts = self._write(op)
        for context in contexts:
            self.ml2.postcommit("update", "ports", context)
        self.events.notify_many("ports", ev.AFTER_UPDATE,
                                [(ctx, originals[pid], port) for pid, port in current.items()])
        return current

    def delete(self, ctx: Context, plural: str, rid: str, revision: int | None = None,
               seen: dict[str, Any] | None = None) -> None:
        """``seen``: as ``update``'s."""
        handler = self._handler(plural)
        notify = self.events.wants(plural, ev.PRECOMMIT_DELETE)
        after = self.events.wants(plural, ev.AFTER_DELETE)
        if not self.ml2.applies(plural):
            def plain(conn: Connection) -> dict[str, Any] | None:
                handler.before_delete(conn, ctx, rid)  # rules that need the caller
                current = self._load_one(conn, plural, rid) if notify or after else None
                if notify:
                    self.events.notify(plural, ev.PRECOMMIT_DELETE, conn, ctx, current)
                handler.delete(conn, rid, revision)
                return current
            gone = self._write(plain)
            if after:
                self.events.notify(plural, ev.AFTER_DELETE, ctx, gone)
            return

        ml2 = self.ml2.wants("delete", plural)

        def op(conn: Connection) -> tuple[dict[str, Any], Any]:
            with self._as_seen(conn, plural, rid, seen) as known:
                current = known if known is not None else self._load_one(conn, plural, rid)
                if notify:
                    self.events.notify(plural, ev.PRECOMMIT_DELETE, conn, ctx, current)
                context = self.ml2.context(conn, plural, current) if ml2 else None
                if context is not None:
                    self.ml2.precommit("delete", plural, context)
                if plural == "ports":
                    self.ml2.binding.forget(conn, rid)
                handler.delete(conn, rid, revision)
            return current, context
        current, context = self._write(op)
        if context is not None:
            # The resource is gone: a driver failing now can only be logged.
            self.ml2.postcommit("delete", plural, context, raise_on_error=False)
        if after:
            self.events.notify(plural, ev.AFTER_DELETE, ctx, current)

    def action(self, ctx: Context, plural: str, rid: str, name: str,
               body: dict[str, Any]) -> dict[str, Any]:
        return self._write(self._handler(plural).action(ctx, rid, name, body))

    # -- tags ------------------------------------------------------------------

    def set_tags(self, ctx: Context, plural: str, rid: str, add: list[str] | None = None,
                 remove: list[str] | None = None, replace: list[str] | None = None) -> list[str]:
        table = self._handler(plural).table
        not_found = self._not_found(plural, rid)
        return self._write(lambda conn: store.edit_tags(conn, table, plural[:-1], rid, not_found,
                                                        add, remove, replace))

    def _not_found(self, plural: str, rid: str) -> Callable[[], Exception]:
        return lambda: errors.not_found(plural[:-1], rid)

    def network_of(self, network_id: str, ctx: Context | None = None) -> dict[str, Any] | None:
        """The few network fields policy targets need (owner, shared)."""
        return self.networks_of([network_id], ctx).get(network_id)

    def networks_of(self, network_ids: list[str],
                    ctx: Context | None = None) -> dict[str, dict[str, Any]]:
        """``network_of`` for many networks in one query (lists of subnets/ports).

        ``shared`` is as the caller sees it (RBAC entries for ``*`` or its
        project; without a caller only ``*`` counts). ``router:external`` is
        the network's flag where the caller sees the network (its own, or an
        entry shares it with it or makes it external to it; internal loads
        and admins see all), else false: a subnet's policy target takes it
        (``rule:external_network`` of ``get_subnet``), and the rule must not
        show a subnet to a project that does not see its network, as
        upstream's query never gives it.
        """
        out: dict[str, dict[str, Any]] = {}
        caller = targets(ctx.project_id if ctx else None)
        with self.db.reader() as conn:
            for part in store.chunks(list(dict.fromkeys(network_ids))):
                for row in conn.execute(_NETWORKS_OF, {"ids": part, CALLER.key: caller}):
                    out[row.id] = {"project_id": row.project_id, "tenant_id": row.project_id,
                                   "shared": bool(row.shared),
                                   "router:external": bool(row.external) and (
                                       ctx is None or ctx.is_admin
                                       or row.project_id == ctx.project_id
                                       or bool(row.reached))}
        return out
