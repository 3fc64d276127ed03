"""The vocabulary in which resources are declared.

A resource is a table of ``Attribute`` entries. From that one declaration the
API derives validation, defaults, visibility, ``fields=``, filters, sort keys
and attribute-level policy, so adding an attribute never means editing a
controller.

Each resource is declared once, as a module constant built by ``resource``;
what an extension adds to a resource declared elsewhere is an
``AttributeMap``, applied by ``extend`` to the copies an API works on, so
the declarations stay as written however many APIs a process builds.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable

from neutrino.resources import validators as v

UNSET: Any = object()  # distinguishes "no default" from a default of None


class _Auto:
    """Default meaning "the plugin computes it" (e.g. a subnet's gateway)."""

    def __repr__(self) -> str:
        return "AUTO"


AUTO: Any = _Auto()


@dataclass(frozen=True)
class Attribute:
    name: str
    validate: Callable[[Any], Any] | None = None  # returns converted value or raises
    default: Any = UNSET
    allow_post: bool = False
    allow_put: bool = False
    is_visible: bool = True
    is_filter: bool = False
    is_sort_key: bool = False
    enforce_policy: bool = False
    # Upstream registers ``<action>:<attribute>`` rules for some attributes
    # it then never checks (no ``enforce_policy`` in their definition, e.g.
    # subnets' ``service_types``): their rules are listed, not enforced.
    policy_unchecked: bool = False
    required_by_policy: bool = False
    convert_filter: Callable[[str], Any] | None = None  # query string -> value

    @property
    def required(self) -> bool:
        return self.allow_post and self.default is UNSET


def attr(name: str, validate: Callable[[Any], Any] | None = None, **kw: Any) -> Attribute:
    """An attribute; an integer one filters by integers its column can hold
    unless it says how its filter converts."""
    bits = v.int_bits(validate)
    if bits and kw.get("is_filter") and kw.get("convert_filter") is None:
        kw["convert_filter"] = v.filter_int_of(bits)
    return Attribute(name, validate, **kw)


def standard_attributes(name_default: Any = "", name_put: bool = True) -> list[Attribute]:
    """Attributes every resource with standard attributes carries."""
    return [
        attr("id", v.uuid, allow_post=False, is_filter=True, is_sort_key=True,
             convert_filter=str),
        attr("name", v.string(255), default=name_default, allow_post=True,
             allow_put=name_put, is_filter=True, is_sort_key=True),
        attr("description", v.string(255), default="", allow_post=True,
             allow_put=True, is_filter=True, is_sort_key=True),
        attr("tenant_id", v.string(255), default=None, allow_post=True,
             required_by_policy=True, is_filter=True, is_sort_key=True),
        attr("project_id", v.string(255), default=None, allow_post=True,
             required_by_policy=True, is_filter=True, is_sort_key=True),
        attr("created_at", is_filter=True, is_sort_key=True),
        attr("updated_at", is_filter=True, is_sort_key=True),
        attr("revision_number", is_filter=True, is_sort_key=True,
             convert_filter=v.filter_int),
        attr("tags", is_filter=False),
    ]


@dataclass
class ResourceDef:
    """One API resource: its names, attributes, parent and actions."""

    singular: str
    plural: str
    attributes: dict[str, Attribute] = field(default_factory=dict)
    parent: str | None = None  # plural of the parent collection, for sub-resources
    parent_key: str = ""  # the attribute holding the parent's id (``policy_id``)
    actions: dict[str, str] = field(default_factory=dict)  # name -> HTTP method
    has_tags: bool = True
    path_prefix: str = ""
    url_name: str = ""  # the collection in URLs when not ``plural`` (``rbac-policies``)
    # The name in policy rules when not ``singular``: upstream names rules of
    # sub-resources after parent and child (``get_policy_bandwidth_limit_rule``).
    policy_name: str = ""
    primary_key: str = "id"  # what markers name (``network_id`` for IP availabilities)
    # ``project_id: null`` in a create body means "no project" (a system-wide
    # setting), not "the caller's project"; only admins may say it.
    null_project: bool = False
    # Reads do not look the parent up for the caller (upstream's conntrack
    # helpers): a parent missing or hidden lists nothing, and a child the
    # caller may not see is the web layer's 404, not its parent's.
    quiet_parent: bool = False
    # A child's id is unique only within its parent (a local IP's port
    # associations, keyed by port): the plugin is given the parent's id too.
    scoped_by_parent: bool = False
    # Listing the children of a parent missing or hidden from the caller is
    # an empty list, not the parent's 404 (upstream's local IP associations).
    lists_unseen_parent: bool = False

    def add(self, *attrs: Attribute) -> None:
        for a in attrs:
            self.attributes[a.name] = a

    def copy(self) -> ResourceDef:
        """The definition an API extends: extensions add attributes and actions
        to it, never to the declaration every API of the process shares."""
        return replace(self, attributes=dict(self.attributes), actions=dict(self.actions))

    @property
    def policy_singular(self) -> str:
        return self.policy_name or self.singular

    @property
    def url_plural(self) -> str:
        return self.url_name or self.plural

    @property
    def url_spellings(self) -> tuple[str, ...]:
        """Every path the collection answers at (``url_plural`` first)."""
        return spellings(self.url_plural)

    @property
    def tag_spellings(self) -> tuple[str, ...]:
        """Where its tags live: upstream's tag extension names the bare
        collection, without a service's prefix (``/v2.0/policies/{id}/tags``
        for QoS policies); the prefixed path is kept as well."""
        return tuple(dict.fromkeys(spellings(self.plural) + self.url_spellings))

    @property
    def collection_path(self) -> str:
        return f"{self.path_prefix}/{self.plural}"


def spellings(path: str) -> tuple[str, ...]:
    """``path`` as given, then with its last segment's hyphens and
    underscores swapped: upstream's router looks a collection up under
    either spelling (``floatingip-pools`` and ``floatingip_pools``)."""
    head, sep, last = path.rpartition("/")
    forms = (last, last.replace("_", "-"), last.replace("-", "_"))
    return tuple(dict.fromkeys(head + sep + form for form in forms))


def resource(singular: str, plural: str, *attrs: Attribute, **kw: Any) -> ResourceDef:
    """A resource declared in one expression, its attributes in the order given."""
    return ResourceDef(singular, plural, {a.name: a for a in attrs}, **kw)


# What an extension adds to resources declared elsewhere: collection -> attributes
# (the shape of ``ApiExtension.attributes``; read, never changed).
AttributeMap = dict[str, list[Attribute]]


def extend(resources: dict[str, ResourceDef], added: AttributeMap) -> None:
    """Apply an extension of the resource map, the one way attributes reach a
    resource another module declares."""
    for plural, attrs in added.items():
        resources[plural].add(*attrs)
