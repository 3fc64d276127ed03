"""``dns`` extension driver: the ``dns-integration`` API extension.

Networks get ``dns_domain`` (a fully qualified domain, or ''); ports get
``dns_name`` and the read-only ``dns_assignment``, the name each fixed IP
has in the network's internal DNS: the port's ``dns_name`` when names are
enabled, otherwise ``host-<address>``, qualified with ``[DEFAULT]
dns_domain``.

As upstream, names are enabled only when ``[DEFAULT] dns_domain`` is set to
something other than its default ``openstacklocal``: with the default, a
``dns_name`` given on a port is validated but not kept.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import store
from neutrino.plugins.ml2.extension_api import ExtensionDriver
from neutrino.resources import validators as v
from neutrino.resources.attributes import Attribute, attr

FQDN_MAX_LEN = 255
DEFAULT_DOMAIN = "openstacklocal."
# A label: lower-case letters, digits and hyphens, or one of the keywords
# upstream's validator accepts for its domain-keywords extension.
_KEYWORDS = ("project_id", "project_name", "user_name", "user_id")
_LABEL = re.compile("^([a-z0-9-]{1,63}|" + "|".join(f"<{k}>" for k in _KEYWORDS) + ")$")
_NUMERIC = re.compile("^[0-9]+$")


# -- validation (upstream's rules and wording) ----------------------------------

def lowercase(value: Any) -> str:
    if not isinstance(value, str):
        raise v.NotConvertible(f"Input value {value} must be string type")
    return value.lower()


def format_problem(name: str, max_len: int = FQDN_MAX_LEN) -> str | None:
    """Why ``name`` is not a partially or fully qualified domain name, if it is not."""
    if not name:
        return None
    relative = name.removesuffix(".")
    reason = None
    labels = relative.split(".")
    if len(relative) > max_len:
        reason = f"'{relative}' exceeds the {max_len} character FQDN limit"
    else:
        for label in labels:
            if not label:
                reason = "Encountered an empty component"
            elif label.startswith("-") or label.endswith("-"):
                reason = f"Name '{label}' must not start or end with a hyphen"
            elif not _LABEL.match(label):
                reason = (f"Name '{label}' must be 1-63 characters long, each of which "
                          "can only be alphanumeric or a hyphen")
            if reason:
                break
        else:
            if len(labels) > 1 and _NUMERIC.match(labels[-1]):
                reason = f"TLD '{labels[-1]}' must not be all numeric"
    return None if reason is None else f"'{name}' not a valid PQDN or FQDN. Reason: {reason}"


def dotted_domain(configured: str | None) -> str:
    """``[DEFAULT] dns_domain`` as a fully qualified name ('' when unset)."""
    if not configured:
        return ""
    return configured if configured.endswith(".") else configured + "."


def names_enabled(configured: str | None) -> bool:
    domain = dotted_domain(configured)
    return bool(domain) and domain != DEFAULT_DOMAIN


def dns_name_validator(conf: Any) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        name = lowercase(value)
        problem = format_problem(name)
        if problem is None and name and names_enabled(conf.dns_domain):
            problem = _fits_domain(name, conf.dns_domain)
        if problem:
            raise v.Invalid(problem)
        return name
    return check


def _fits_domain(name: str, configured: str) -> str | None:
    """A PQDN must leave room for the domain; an FQDN must end in it."""
    suffix = "." + dotted_domain(configured)
    if not name.endswith("."):
        if len(name) + len(suffix) > FQDN_MAX_LEN:
            return (f"The dns_name passed is a PQDN and its size is '{len(name)}'. The "
                    f"dns_domain option in neutron.conf is set to {configured}, with a "
                    f"length of '{len(suffix)}'. When the two are concatenated to form "
                    "a FQDN (with a '.' at the end), the resulting length exceeds the "
                    f"maximum size of '{FQDN_MAX_LEN}'")
        return None
    if len(name) <= len(suffix) or not name.endswith(suffix):
        return ("The dns_name passed is a FQDN. Its higher level labels must be equal "
                f"to the dns_domain option in neutron.conf, that has been set to "
                f"'{configured}'. It must also include one or more valid DNS labels "
                f"to the left of '{configured}'")
    return None


def dns_domain(value: Any) -> str:
    domain = lowercase(value)
    if not domain:
        return domain
    if not domain.endswith("."):
        raise v.Invalid(f"'{domain}' is not a FQDN")
    problem = format_problem(domain)
    if problem:
        raise v.Invalid(problem)
    if len(domain) > FQDN_MAX_LEN - 2:
        raise v.Invalid(f"'{domain}' contains {len(domain)} characters. Adding a "
                        "sub-domain will cause it to exceed the maximum length of a "
                        f"FQDN of '{FQDN_MAX_LEN}'")
    return domain


def assignment(fixed_ips: list[dict[str, Any]], dns_name: str,
               configured: str | None) -> list[dict[str, str]]:
    """One ``{hostname, ip_address, fqdn}`` per fixed IP, as the internal DNS names them."""
    domain = dotted_domain(configured)
    if not names_enabled(configured):
        dns_name = ""
    out = []
    for ip in fixed_ips:
        address = ip["ip_address"]
        if dns_name:
            hostname = dns_name
            fqdn = dns_name if dns_name.endswith(".") else f"{dns_name}.{domain}"
        else:
            hostname = "host-" + address.replace(".", "-").replace(":", "-")
            fqdn = f"{hostname}.{domain}" if domain else hostname
        out.append({"hostname": hostname, "ip_address": address, "fqdn": fqdn})
    return out


# -- the driver -------------------------------------------------------------------

class DnsDriver(ExtensionDriver):
    extension_alias = "dns-integration"

    def attributes(self) -> dict[str, list[Attribute]]:
        return {
            "networks": [attr("dns_domain", dns_domain, default="", allow_post=True,
                              allow_put=True)],
            "ports": [attr("dns_name", dns_name_validator(self.conf), default="",
                           allow_post=True, allow_put=True, is_filter=True,
                           convert_filter=str.lower),
                      attr("dns_assignment")],
        }

    def process_create(self, conn: Connection, ctx: Context, plural: str,
                       data: dict[str, Any], resource_id: str) -> None:
        if plural == "networks" and data.get("dns_domain"):
            conn.execute(sa.insert(t.network_dns_domains).values(
                network_id=resource_id, dns_domain=data["dns_domain"]))
        elif plural == "ports" and data.get("dns_name") and self._names_enabled:
            conn.execute(sa.insert(t.port_dns_names).values(
                port_id=resource_id, dns_name=data["dns_name"]))

    def process_update(self, conn: Connection, ctx: Context, plural: str,
                       data: dict[str, Any], resource_id: str,
                       original: dict[str, Any]) -> None:
        if plural == "networks" and data.get("dns_domain") is not None:
            self._replace(conn, t.network_dns_domains, "network_id", resource_id,
                          dns_domain=data["dns_domain"])
        elif plural == "ports" and data.get("dns_name") is not None and self._names_enabled:
            self._replace(conn, t.port_dns_names, "port_id", resource_id,
                          dns_name=data["dns_name"])

    def filter_clauses(self, plural: str, table: Any,
                       filters: dict[str, list[Any]]) -> list[Any]:
        if plural != "ports" or "dns_name" not in filters:
            return []
        own = t.port_dns_names
        wanted = filters["dns_name"]
        clause = table.c.id.in_(sa.select(own.c.port_id).where(own.c.dns_name.in_(wanted)))
        if "" in wanted:  # ports without a name have no row
            clause = sa.or_(clause, table.c.id.not_in(sa.select(own.c.port_id)))
        return [clause]

    def extend(self, conn: Connection, plural: str, items: list[dict[str, Any]]) -> None:
        if plural == "networks":
            found = self._lookup(conn, t.network_dns_domains, "network_id", "dns_domain", items)
            for item in items:
                item["dns_domain"] = found.get(item["id"], "")
        elif plural == "ports":
            found = self._lookup(conn, t.port_dns_names, "port_id", "dns_name", items)
            for item in items:
                item["dns_name"] = found.get(item["id"], "")
                item["dns_assignment"] = assignment(item.get("fixed_ips") or [],
                                                    item["dns_name"], self.conf.dns_domain)

    @property
    def _names_enabled(self) -> bool:
        return names_enabled(self.conf.dns_domain)

    @staticmethod
    def _replace(conn: Connection, table: Any, key: str, rid: str, **values: str) -> None:
        """Keep one row per resource, and none for an empty value."""
        conn.execute(sa.delete(table).where(table.c[key] == rid))
        if any(values.values()):
            conn.execute(sa.insert(table).values({key: rid, **values}))

    @staticmethod
    def _lookup(conn: Connection, table: Any, key: str, column: str,
                items: list[dict[str, Any]]) -> dict[str, str]:
        found = store.children(conn, table, key, store.item_ids(items), (), (key, column))
        return {rid: rows[0][1] for rid, rows in found.items() if rows}
