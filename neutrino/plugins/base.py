"""What a service plugin and an API extension are.

A service plugin serves collections of its own (routers, QoS policies, ...)
and may declare API extensions. An API extension is data: its descriptor,
new resources, attributes it adds to existing resources, custom actions,
and request hooks; the API layer turns that data into routes, validation,
policy and ``/v2.0/extensions`` entries. A third-party package provides both
through entry points (``neutrino.service_plugins``) and needs no change here.
"""
from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Sequence

from oslo_policy import policy

from neutrino.context import Context
from neutrino.resources.attributes import Attribute, ResourceDef
from neutrino.resources.extensions import ExtensionDescriptor

if TYPE_CHECKING:
    from neutrino.plugins.core import CorePlugin

# action(ctx, resource_id, body) -> response body
ActionHandler = Callable[[Context, str, Any], dict[str, Any]]
# route handler(api, ctx, path fields, body or None) -> response body (None:
# ``null``); ``api`` shapes what the caller may see (``neutrino.api.controller.Api``)
RouteHandler = Callable[[Any, Context, dict[str, str], Any], Any]


@dataclass
class CustomRoute:
    """A URL an extension serves outside the generic resources (upstream's
    resource extensions with their own controller, e.g.
    ``/v2.0/agents/{rid}/l3-routers``).

    ``path`` is under ``/v2.0``; path fields are named ``rid`` then
    ``child_id`` (the router needs one name per position). ``methods`` maps
    an HTTP method to (policy rule checked with an empty target, as
    upstream's controllers do; success status; handler). A handler's
    ``body`` is the parsed JSON of a POST or PUT (None for a PUT without
    one) and the query string's parameters (name -> values) of a GET.
    """

    path: str
    methods: dict[str, tuple[str, int, RouteHandler]]


class RequestHook(abc.ABC):
    """A request extension: sees requests and responses of existing controllers."""

    def on_request(self, ctx: Context, method: str, plural: str, body: Any) -> None:
        """Inspect or adjust a parsed request body before validation."""

    def on_response(self, ctx: Context, method: str, plural: str, payload: Any) -> None:
        """Inspect or adjust a response payload before it is sent."""


class AttributeHandler(abc.ABC):
    """Stores and shows the attributes an extension adds to a resource."""

    # The attributes it serves (set by the service assembly from the extension).
    attribute_names: tuple[str, ...] = ()

    @abc.abstractmethod
    def process(self, ctx: Context, plural: str, data: dict[str, Any],
                result: dict[str, Any], creating: bool) -> None:
        """Persist the extension's attributes from ``data``; on create, add
        them to ``result`` (an updated resource is extended afterwards by
        the controller, through ``extend``)."""

    @abc.abstractmethod
    def extend(self, ctx: Context, plural: str, items: list[dict[str, Any]]) -> None:
        """Add the extension's attributes to resources being returned."""

    def check_update(self, ctx: Context, plural: str, resource_id: str,
                     data: dict[str, Any]) -> None:
        """Refuse an update before any of it is written: ``process`` runs
        after the resource's own update, so a refusal there would leave that
        done."""

    def delete(self, ctx: Context, plural: str, resource_id: str) -> None:
        """Forget the extension's data of a deleted resource."""

    def joined(self, plural: str) -> Sequence[Any]:
        """Reads (``plugins/joined.py``) that bring the attribute with a single
        resource's own SELECT, where the core's handler takes them (networks,
        ports); ``extend`` then reads only for items that came without it."""
        return ()


@dataclass
class ApiExtension:
    descriptor: ExtensionDescriptor
    resources: list[ResourceDef] = field(default_factory=list)
    attributes: dict[str, list[Attribute]] = field(default_factory=dict)
    attribute_handler: AttributeHandler | None = None
    actions: dict[str, dict[str, ActionHandler]] = field(default_factory=dict)
    request_hooks: list[RequestHook] = field(default_factory=list)
    policies: list[policy.RuleDefault] = field(default_factory=list)
    routes: list[CustomRoute] = field(default_factory=list)


# (interval in seconds, task): work the RPC process repeats for a plugin
PeriodicTask = tuple[float, Callable[[], None]]


class ServicePlugin(abc.ABC):
    """Base of service plugins; one plugin per ``service_type``."""

    service_type: str = ""
    supported_extension_aliases: tuple[str, ...] = ()
    # Providers this plugin brings, as ``GET /v2.0/service-providers`` lists
    # them: ``{"service_type": ..., "name": ..., "default": bool}``, and the
    # ``driver`` (a class path) that service profiles name, never shown.
    service_providers: tuple[dict[str, Any], ...] = ()

    def __init__(self, conf: Any, db: Any) -> None:
        self.conf = conf
        self.db = db
        self.agent_notifiers: dict[str, Any] = {}

    def connect(self, core: CorePlugin) -> None:
        """Called once the plugin is made, before its collections, extensions
        and agent notifiers are asked for: keep the core plugin, whose
        collections this plugin may use (creating ports for routers), and
        subscribe to its ``events`` (``neutrino.plugins.events``). The other
        plugins come with ``bind``."""
        self.core = core

    def rpc_endpoints(self) -> dict[str, list[Any]]:
        """What agents call on this plugin, by topic (served by the RPC process)."""
        return {}

    def periodic_tasks(self) -> list[PeriodicTask]:
        """Work repeated in the RPC process (one per server), e.g. moving
        networks away from dead agents."""
        return []

    def extensions(self) -> list[ApiExtension]:
        """The API extensions this plugin brings."""
        return []

    def initialize(self) -> None:
        """Start-up work, once per server before the workers fork."""

    def bind(self, plugins: Any) -> None:
        """Called once every plugin is loaded, with the plugin directory."""

    def quota_countables(self) -> list[Any]:
        """Resources with quotas this plugin brings (``quota.engine.Countable``)."""
        return []

    @classmethod
    def describe(cls) -> str:
        return (cls.__doc__ or cls.__name__).strip().splitlines()[0]

    def collections(self) -> dict[str, Any]:
        """The object serving each collection this plugin owns.

        Each has the core plugin's collection interface: ``create(ctx,
        plural, items)``, ``get``, ``list``, ``update``, ``delete`` and,
        for tagged resources, ``set_tags``.
        """
        return {}
