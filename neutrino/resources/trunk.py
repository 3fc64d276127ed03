"""The ``trunk`` resource and ``trunk-details`` on ports, declared as data."""
from __future__ import annotations

from typing import Any

from neutrino.resources import validators as v
from neutrino.resources.attributes import AttributeMap, attr, resource, standard_attributes
from neutrino.resources.extensions import described

TRUNK_EXTENSION = described("trunk")
TRUNK_DETAILS = described("trunk-details")

SUB_PORTS = "sub_ports"
INHERIT = "inherit"


def subport_list_problem(value: Any) -> str | None:
    """Upstream's basic check of a list of subports (``type:subports``):
    dicts with unique valid port ids, both segmentation keys when more than
    the port id is given, and a segmentation id used once per type. The
    message, or None when the list passes. ``inherit`` ends the check, as
    upstream's does."""
    if not isinstance(value, list):
        return f"Invalid data format for subports: '{value}' is not a list"
    ports: set[str] = set()
    used: dict[Any, set[Any]] = {}
    for sub in value:
        if not isinstance(sub, dict):
            return f"Invalid data format for subport: '{sub}' is not a dict"
        if "port_id" not in sub:
            return "A valid port UUID must be specified"
        try:
            v.uuid(sub["port_id"])
        except v.Invalid:
            return f"Invalid UUID for subport: '{sub['port_id']}'"
        if sub["port_id"] in ports:
            return f"Non unique UUID for subport: '{sub['port_id']}'"
        ports.add(sub["port_id"])
        kind = sub.get("segmentation_type")
        if kind == INHERIT:
            return None
        seg_id = sub.get("segmentation_id")
        if (not kind or seg_id is None) and len(sub) > 1:
            return (f"Invalid subport details '{sub}': missing segmentation information. "
                    f"Must specify both segmentation_id and segmentation_type")
        if seg_id in used.get(kind, set()):
            return f"Segmentation ID '{seg_id}' for '{sub['port_id']}' is not unique"
        if seg_id is not None:
            used.setdefault(kind, set()).add(seg_id)
    return None


def _subports(value: Any) -> list[dict[str, Any]]:
    problem = subport_list_problem(value)
    if problem:
        raise v.Invalid(problem)
    subports: list[dict[str, Any]] = value
    return subports


TRUNK = resource(
    "trunk", "trunks",
    *standard_attributes(),
    attr("admin_state_up", v.boolean, default=True, allow_post=True, allow_put=True,
         is_filter=True, is_sort_key=True, convert_filter=v.filter_bool),
    attr("port_id", v.uuid, allow_post=True, required_by_policy=True, is_filter=True,
         is_sort_key=True, convert_filter=str),
    attr("status", is_filter=True, is_sort_key=True),
    attr(SUB_PORTS, _subports, default=[], allow_post=True, enforce_policy=True),
    # ``tag-creation``: tags may be given on POST.
    attr("tags", v.list_of(v.string(255)), default=[], allow_post=True),
    actions={"add_subports": "PUT", "remove_subports": "PUT", "get_subports": "GET"},
)


# ``trunk_details`` of a trunk's parent port (absent on other ports).
PORT_TRUNK_DETAILS: AttributeMap = {"ports": [
    attr("trunk_details", enforce_policy=True, required_by_policy=True)]}
