"""Validators that also convert.

Each validator takes the raw JSON value and returns the value to store, or
raises ``Invalid`` with upstream's reason text; the API layer wraps that
reason into ``InvalidInput`` naming the attribute.
"""
from __future__ import annotations

import json
import re
import uuid as _uuid
from typing import Any, Callable

import netaddr

from neutrino import errors


class Invalid(ValueError):
    """A value failed validation; ``str(exc)`` is the reason."""


class NotConvertible(Invalid):
    """A value failed conversion: upstream reports these without naming the
    attribute ("Invalid input for operation: 'x' cannot be converted to
    boolean."), unlike validation failures."""


Validator = Callable[[Any], Any]

_MAC_RE = re.compile(r"^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$")


def string(max_len: int | None = None) -> Validator:
    def check(value: Any) -> str:
        if not isinstance(value, str):
            raise Invalid(f"'{value}' is not a valid string")
        if max_len is not None and len(value) > max_len:
            raise Invalid(f"'{value}' exceeds maximum length of {max_len}")
        return value
    return check


def or_none(inner: Validator) -> Validator:
    def check(value: Any) -> Any:
        return None if value is None else inner(value)
    if int_bits(inner):
        check.int_bits = int_bits(inner)  # type: ignore[attr-defined]
    return check


def uuid(value: Any) -> str:
    if not isinstance(value, str):
        raise Invalid(f"'{value}' is not a valid UUID")
    try:
        _uuid.UUID(value)
    except ValueError:
        raise Invalid(f"'{value}' is not a valid UUID") from None
    return value


def boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        low = value.strip().lower()
        if low in ("true", "1", "yes", "on", "t", "y"):
            return True
        if low in ("false", "0", "no", "off", "f", "n"):
            return False
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise NotConvertible(f"'{value}' cannot be converted to boolean")


# The signed ranges of the database's integer columns (``Integer``,
# ``BigInteger``): a value beyond its column's range is refused here, the
# same on every backend, rather than by whichever driver notices first.
INT32 = (-2 ** 31, 2 ** 31 - 1)
INT64 = (-2 ** 63, 2 ** 63 - 1)


def _column_range(bits: int) -> tuple[int, int]:
    return INT64 if bits == 64 else INT32


def integer(lo: int | None = None, hi: int | None = None, bits: int = 32) -> Validator:
    """An integer within ``lo``..``hi`` and within the range of the
    ``bits``-bit column that stores it (32 unless the column is a
    ``BigInteger``)."""
    col_lo, col_hi = _column_range(bits)
    low = col_lo if lo is None else max(lo, col_lo)
    high = col_hi if hi is None else min(hi, col_hi)

    def check(value: Any) -> int:
        if isinstance(value, bool):
            raise NotConvertible(f"'{value}' is not an integer")
        try:
            num = int(value)
        except (TypeError, ValueError, OverflowError):
            raise NotConvertible(f"'{value}' is not an integer") from None
        if isinstance(value, float) and value != num:
            raise NotConvertible(f"'{value}' is not an integer")
        if num < low:
            raise Invalid(f"'{num}' is too small - must be at least '{low}'")
        if num > high:
            raise Invalid(f"'{num}' is too large - must be no larger than '{high}'")
        return num
    check.int_bits = bits  # type: ignore[attr-defined]
    return check


def to_int(value: Any) -> int:
    """Upstream's ``convert_to_int``: whatever ``int()`` takes (a float is
    truncated, a boolean is 0 or 1), for the attributes upstream converts
    so rather than validates."""
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        raise NotConvertible(f"'{value}' is not an integer") from None


def non_negative(bits: int = 32) -> Validator:
    """``to_int`` then upstream's ``type:non_negative``, with upstream's
    words, and never beyond its column's range."""
    _, high = _column_range(bits)

    def check(value: Any) -> int:
        num = to_int(value)
        if num < 0:
            raise Invalid(f"'{num}' should be non-negative")
        if num > high:
            raise Invalid(f"'{num}' is too large - must be no larger than '{high}'")
        return num
    check.int_bits = bits  # type: ignore[attr-defined]
    return check


def int_bits(validator: Validator | None) -> int | None:
    """The column width an integer validator declares, if it is one."""
    return getattr(validator, "int_bits", None)


def values(*allowed: Any, convert: Validator | None = None) -> Validator:
    def check(value: Any) -> Any:
        if convert is not None:
            try:
                value = convert(value)
            except Invalid:
                pass
        if value not in allowed:
            raise Invalid(f"{value!r} is not in {list(allowed)!r}".replace('"', "'"))
        return value
    if int_bits(convert):
        check.int_bits = int_bits(convert)  # type: ignore[attr-defined]
    return check


def ip_address(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise Invalid(f"'{value}' is not a valid IP address")
    try:
        ip = netaddr.IPAddress(value, flags=netaddr.INET_PTON)
    except (netaddr.AddrFormatError, ValueError, TypeError):
        ip = _zero_filled(value)
        if ip is None:
            raise Invalid(f"'{value}' is not a valid IP address") from None
    if ip.version == 4 and str(ip) != value:
        raise Invalid(f"'{value}' is not an accepted IP address, '{ip}' is recommended")
    return str(ip)


def _zero_filled(value: str) -> netaddr.IPAddress | None:
    """An IPv4 address written with leading zeros (``010.0.0.1``): upstream
    names the address it recommends instead of calling it invalid."""
    if ":" in value or value.count(".") != 3 or re.search(r"\s", value):
        return None
    try:
        return netaddr.IPAddress(value, flags=netaddr.ZEROFILL | netaddr.INET_PTON)
    except (netaddr.AddrFormatError, ValueError, TypeError):
        return None


def subnet_cidr(value: Any) -> str:
    """A CIDR with an explicit prefix length, normalised to its network."""
    if not isinstance(value, str):
        raise NotConvertible(f"{value} is not in a CIDR format")
    try:
        net = netaddr.IPNetwork(value)
        netaddr.IPAddress(value.split("/")[0], flags=netaddr.INET_PTON)
    except (netaddr.AddrFormatError, ValueError, TypeError):
        raise NotConvertible(f"{value} is not in a CIDR format") from None
    if "/" not in value:
        raise Invalid(f"'{value}' isn't a recognized IP subnet cidr, "
                      f"'{net.cidr}' is recommended")
    # Host bits are accepted and cleared, as upstream does ('10.0.0.1/24'
    # becomes '10.0.0.0/24').
    return str(net.cidr)


def subnet(value: Any) -> str:
    """A CIDR as upstream's subnet validator takes it, normalised to its
    network: no whitespace, an explicit prefix length, and for IPv4 no
    other spelling than the canonical one (``10.0.0.0/255.255.255.0`` is
    refused). Host bits are accepted, as upstream."""
    if not isinstance(value, str) or re.search(r"\s", value):
        raise Invalid(f"'{value}' is not a valid IP subnet")
    try:
        net = netaddr.IPNetwork(value)
    except (netaddr.AddrFormatError, ValueError, TypeError):
        raise Invalid(f"'{value}' is not a valid IP subnet") from None
    if "/" not in value or (net.version == 4 and str(net) != value):
        raise Invalid(f"'{value}' isn't a recognized IP subnet cidr, "
                      f"'{net.cidr}' is recommended")
    return str(net.cidr)


def subnet_list(value: Any) -> list[str]:
    """Subnet pool ``prefixes``: subnets, none given twice."""
    if not isinstance(value, list):
        raise Invalid(f"'{value}' is not a list")
    texts = [str(x) for x in value]
    if len(set(texts)) != len(texts):
        raise Invalid(f"Duplicate items in the list: '{', '.join(texts)}'")
    return [subnet(x) for x in value]


def uuid_list(value: Any) -> list[str]:
    """``convert_none_to_empty_list`` then ``type:uuid_list``: null means
    none, and no id given twice (a port's security groups, a firewall
    policy's rules, a firewall group's ports)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise Invalid(f"'{value}' is not a list")
    out = [uuid(x) for x in value]
    dups = sorted({x for x in out if out.count(x) > 1})
    if dups:
        raise Invalid(f"Duplicate items in the list: '{', '.join(dups)}'")
    return out


def ip_or_subnet(value: Any) -> str:
    """An address or a CIDR (allowed address pairs accept both); a CIDR is
    checked as ``subnet`` checks it but kept as given, host bits included."""
    if isinstance(value, str) and "/" in value:
        try:
            subnet(value)
        except Invalid:
            raise Invalid(f"'{value}' is neither a valid IP address, nor is it "
                          f"a valid IP subnet") from None
        return str(netaddr.IPNetwork(value))
    try:
        return ip_address(value)
    except Invalid:
        raise Invalid(f"'{value}' is neither a valid IP address, nor is it "
                      f"a valid IP subnet") from None


def mac_address(value: Any) -> str:
    if not isinstance(value, str) or not _MAC_RE.match(value):
        raise Invalid(f"'{value}' is not a valid MAC address")
    mac = value.lower().replace("-", ":")
    # Upstream refuses the all-zero and the broadcast MAC; other multicast
    # ones are accepted.
    if mac in ("00:00:00:00:00:00", "ff:ff:ff:ff:ff:ff"):
        raise Invalid(f"'{value}' is not a valid MAC address")
    return mac


# Upstream adds the compute prefix to its list of prefixes character by
# character, so a service type starting with any of its letters passes.
_SERVICE_TYPE_PREFIXES = ("network:", "neutron:", *"compute:")


def subnet_service_types(value: Any) -> list[str]:
    """``subnet-service-types``: device owners whose ports a subnet serves."""
    if not value:
        return []
    if not isinstance(value, list):
        raise errors.HTTPBadRequest(msg="Subnet service types must be a list.")
    for service_type in value:
        if not isinstance(service_type, str):
            raise errors.InvalidInputSubnetServiceType(service_type=service_type)
        if not service_type.startswith(_SERVICE_TYPE_PREFIXES):
            raise errors.InvalidSubnetServiceType(service_type=service_type)
    return list(value)


def one_of(*allowed: Any, convert: Validator | None = None) -> Validator:
    """Upstream's ``type:values`` check and its wording ("x is not in valid_values")."""
    def check(value: Any) -> Any:
        if convert is not None:
            value = convert(value)
        if isinstance(value, bool) or value not in allowed:
            raise Invalid(f"{value} is not in valid_values")
        return value
    return check


def list_of(item: Validator, unique: str | None = None) -> Validator:
    """A JSON list whose items each pass ``item``; ``unique`` names duplicates."""
    def check(value: Any) -> list[Any]:
        if not isinstance(value, list):
            raise Invalid(f"'{value}' is not a list")
        out = [item(x) for x in value]
        if unique:
            seen: set[str] = set()
            for raw, x in zip(value, out):
                key = repr(x)
                if key in seen:
                    raise Invalid(f"Duplicate {unique} '{raw}'")
                seen.add(key)
        return out
    return check


AZ_HINTS_MAX = 255  # upstream's column: the hints as JSON must fit


def availability_zone_hints(value: Any) -> list[str]:
    """Upstream's ``availability_zone_hint_list``: unique strings whose JSON
    fits the column; too many is upstream's InvalidInput, not a reason."""
    if not isinstance(value, list):
        raise Invalid(f"'{value}' is not a list")
    dups = sorted({str(x) for x in value if value.count(x) > 1})
    if dups:
        raise Invalid(f"Duplicate items in the list: '{', '.join(dups)}'")
    out = [string()(x) for x in value]
    if len(json.dumps(out)) > AZ_HINTS_MAX:
        raise errors.InvalidInput(error_message="Too many availability_zone_hints specified")
    return out


def dict_with(keys: dict[str, Validator], required: tuple[str, ...] = (),
              what: str = "dict") -> Validator:
    def check(value: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise Invalid(f"Invalid data format for {what}: '{value}'")
        extra = set(value) - set(keys)
        if extra:
            raise Invalid(f"Unrecognized attribute(s) '{', '.join(sorted(extra))}'")
        for key in required:
            if key not in value:
                raise Invalid(f"Validation of dictionary's keys failed. Expected "
                              f"keys: {set(required)} Provided keys: {set(value)}")
        return {k: keys[k](x) for k, x in value.items()}
    return check


def dict_or_empty(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise Invalid(f"'{value}' is not a dictionary")
    return value


def filter_int_of(bits: int) -> Callable[[str], int]:
    """A filter's text as an integer its ``bits``-bit column can hold."""
    low, high = _column_range(bits)

    def convert(text: str) -> int:
        num = int(text)
        if not low <= num <= high:
            raise Invalid(f"'{text}' is out of range")
        return num
    return convert


filter_int = filter_int_of(32)
filter_int64 = filter_int_of(64)


def filter_bool(text: str) -> bool:
    return boolean(text)


# Composite validators used by the core resources.

def _nameserver(value: Any) -> str:
    try:
        return ip_address(value)
    except Invalid as exc:
        raise Invalid(f"'{value}' is not a valid nameserver. {exc}") from None


nameservers = list_of(_nameserver, unique="nameserver")
host_routes = list_of(dict_with({"destination": subnet, "nexthop": ip_address},
                                ("destination", "nexthop"), "host route"),
                      unique="hostroute")
allocation_pools = list_of(dict_with({"start": ip_address, "end": ip_address},
                                     ("start", "end"), "allocation pool"))


def _fixed_ip(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise Invalid(f"Invalid data format for fixed IP: '{value}'")
    extra = set(value) - {"subnet_id", "ip_address"}
    if extra:
        raise Invalid(f"Invalid data format for fixed IP: '{value}'")
    out: dict[str, Any] = {}
    if "subnet_id" in value:
        out["subnet_id"] = uuid(value["subnet_id"])
    if "ip_address" in value:
        out["ip_address"] = ip_address(value["ip_address"])
    return out


def fixed_ips(value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise Invalid(f"Invalid data format for fixed IP: '{value}'")
    out = [_fixed_ip(x) for x in value]
    seen: set[str] = set()
    for item in out:
        ip = item.get("ip_address")
        if ip:
            if ip in seen:
                raise Invalid(f"Duplicate IP address '{ip}'")
            seen.add(ip)
    return out


def _address_pair(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise Invalid("Allowed address pairs must be a list.")
    if "ip_address" not in value:
        # Upstream reports this with its own error type, not InvalidInput;
        # errors is the leaf vocabulary every layer may raise.
        raise errors.AllowedAddressPairsMissingIP()
    extra = set(value) - {"ip_address", "mac_address"}
    if extra:
        raise Invalid(f"Unrecognized attribute(s) '{', '.join(sorted(extra))}'")
    out = {"ip_address": ip_or_subnet(value["ip_address"])}
    _not_multicast_address(value["ip_address"])
    if value.get("mac_address") is not None:
        out["mac_address"] = mac_address(value["mac_address"])
        if netaddr.EUI(out["mac_address"]).words[0] & 1:
            raise errors.HTTPBadRequest(
                msg=f"MAC address {value['mac_address']} is a multicast address, "
                    f"which is not supported.")
    return out


_MULTICAST = {4: netaddr.IPNetwork("224.0.0.0/4"), 6: netaddr.IPNetwork("ff00::/8")}


def _not_multicast_address(given: str) -> None:
    """``aap-reject-multicast``: a port may not claim a multicast group as an
    address of its own, nor a range reaching into one (IPv4's ``0.0.0.0/0``
    stays allowed, as upstream: it is how "any address" is said)."""
    if "/" not in given:
        if netaddr.IPAddress(given).is_multicast():
            raise errors.HTTPBadRequest(
                msg=f"IP {given} is a multicast address, which is not supported.")
        return
    net = netaddr.IPNetwork(given)
    if net.prefixlen == 0 and net.version == 4:
        return
    mcast = _MULTICAST[net.version]
    if net.first <= mcast.last and mcast.first <= net.last:
        raise errors.HTTPBadRequest(
            msg=f"Subnet {net} overlaps with multicast range {mcast}, which is not supported.")


def allowed_address_pairs(value: Any) -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise Invalid("Allowed address pairs must be a list.")
    out = [_address_pair(x) for x in value]
    seen = set()
    for pair in out:
        key = (pair["ip_address"], pair.get("mac_address"))
        if key in seen:
            raise Invalid("Duplicate address detected")
        seen.add(key)
    return out


def _dhcp_opt(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict) or "opt_name" not in value:
        raise NotConvertible(f"No valid key specs matched for: {value}")
    extra = set(value) - {"opt_name", "opt_value", "ip_version"}
    if extra:
        raise Invalid(f"Invalid data format for extra-dhcp-opt: {value}")
    name = string(255)(value["opt_name"])
    if not name:
        raise Invalid(f"Invalid data format for extra-dhcp-opt: {value}")
    opt_value = value.get("opt_value")
    if opt_value is not None:
        opt_value = string(255)(opt_value)
    version = value.get("ip_version", 4)
    version = values(4, 6, convert=integer())(version)
    return {"opt_name": name, "opt_value": opt_value, "ip_version": version}


extra_dhcp_opts = list_of(_dhcp_opt)
prefixes = subnet_list
