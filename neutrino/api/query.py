"""List queries: filters, ``fields``, sorting and pagination, as upstream.

The attribute map says which attributes filter and sort; anything else is
refused (``filter-validation``), so a typo never silently returns
everything.
"""
from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from neutrino import errors
from neutrino.db.query import TAG_FILTERS, ListQuery
from neutrino.resources import validators as v
from neutrino.resources.attributes import ResourceDef

CONTROL = {"fields", "sort_key", "sort_dir", "limit", "marker", "page_reverse"}


def _convert_filter(rdef: ResourceDef, key: str, raw: str) -> Any:
    attr = rdef.attributes[key]
    if attr.convert_filter is not None:
        try:
            return attr.convert_filter(raw)
        except (ValueError, v.Invalid):
            raise errors.InvalidInput(
                error_message=f"Invalid input for {key}. Reason: '{raw}' is not a "
                              f"valid value") from None
    return raw


def parse(rdef: ResourceDef, params: dict[str, list[str]], max_limit: int) -> ListQuery:
    q = ListQuery()
    for key, raws in params.items():
        if key in CONTROL:
            continue
        if key in TAG_FILTERS:
            q.filters[key] = list(raws)
            continue
        attr = rdef.attributes.get(key)
        if attr is None or not attr.is_filter:
            raise errors.HTTPBadRequest(msg=f"['{key}'] is invalid attribute for filtering")
        q.filters[key] = [_convert_filter(rdef, key, r) for r in raws]
    fields = [f for f in params.get("fields", []) if f]
    q.fields = fields or None
    q.sorts = _sorts(rdef, params.get("sort_key", []), params.get("sort_dir", []))
    q.limit = _limit(params.get("limit", [None])[-1], max_limit)
    q.marker = params.get("marker", [None])[-1] or None
    q.page_reverse = params.get("page_reverse", ["false"])[-1].lower() == "true"
    return q


def _sorts(rdef: ResourceDef, keys: list[str], dirs: list[str]) -> list[tuple[str, bool]]:
    if len(dirs) != len(keys):
        raise errors.HTTPBadRequest(msg="The number of sort_keys and sort_dirs must be same")
    out = []
    for i, key in enumerate(keys):
        attr = rdef.attributes.get(key)
        if attr is None or not attr.is_sort_key:
            raise errors.HTTPBadRequest(msg=f"['{key}'] is invalid attribute for sort_keys")
        direction = dirs[i]
        if direction not in ("asc", "desc"):
            raise errors.HTTPBadRequest(msg=f"['{direction}'] is invalid value for sort_dirs, "
                                            f"valid value is 'asc' and 'desc'")
        out.append((key, direction == "asc"))
    return out


def _limit(raw: str | None, max_limit: int) -> int | None:
    if raw is None:
        return max_limit if max_limit > 0 else None
    try:
        limit = int(raw)
        # The query asks for one row more than the page: that must still
        # be a 64-bit integer on every backend.
        if not 0 <= limit < v.INT64[1]:
            raise ValueError
    except ValueError:
        raise errors.BadRequest(resource="limit",
                                msg=f"Limit must be an integer 0 or greater and not '{raw}'") from None
    if limit == 0:
        return max_limit if max_limit > 0 else None
    return min(limit, max_limit) if max_limit > 0 else limit


def links(base_url: str, params: dict[str, list[str]], plural: str,
          items: list[dict[str, Any]], q: ListQuery, key: str = "id") -> list[dict[str, str]]:
    """``<collection>_links`` as upstream builds them (next / previous)."""
    if not q.limit:
        return []
    if not items:
        # Past the last page upstream still offers a way back.
        if q.page_reverse:
            return []
        query = urlencode([kv for kv in (
            (k, val) for k, vals in params.items() if k not in ("marker", "page_reverse")
            for val in vals)] + [("page_reverse", "True")])
        return [{"rel": "previous", "href": f"{base_url}/v2.0/{plural}?{query}"}]
    keep = [(k, val) for k, vals in params.items() if k not in ("marker", "page_reverse")
            for val in vals]
    out = []
    short = len(items) < q.limit
    if not (short and not q.page_reverse):
        query = urlencode(keep + [("marker", items[-1][key])])
        out.append({"rel": "next", "href": f"{base_url}/v2.0/{plural}?{query}"})
    if not (short and q.page_reverse):
        query = urlencode(keep + [("marker", items[0][key]), ("page_reverse", "True")])
        out.append({"rel": "previous", "href": f"{base_url}/v2.0/{plural}?{query}"})
    return out
