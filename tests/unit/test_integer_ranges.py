"""Every integer a request can carry is bounded before SQL sees it.

A value beyond its column's range is refused differently by each backend
(or not at all), so the resource definitions must bound it: an attribute
filtering a column that holds integers converts its filter to an integer
the column can hold, and an integer attribute's validator refuses what
the column cannot store.
"""
from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

import neutrino.resources as resources_pkg
from neutrino.db import tables
from neutrino.resources import validators as v
from neutrino.resources.attributes import Attribute, ResourceDef

INTEGER_COLUMNS = {c.name for table in tables.metadata.tables.values()
                   for c in table.columns if isinstance(c.type, sa.Integer)}
# Integer columns whose API attribute is text (``id`` of agents is a UUID:
# the integer ``id``s are internal tables' keys).
TEXT_ATTRIBUTES = {"id"}
# Filters their plugin converts itself (through ``validators.filter_int``).
PLUGIN_CONVERTED = {("network_ip_availabilities", "ip_version")}


def _attributes() -> Iterator[tuple[str, Attribute]]:
    for info in pkgutil.iter_modules(resources_pkg.__path__):
        module = importlib.import_module(f"neutrino.resources.{info.name}")
        for value in vars(module).values():
            if isinstance(value, ResourceDef):
                yield from ((value.plural, a) for a in value.attributes.values())
            elif isinstance(value, dict):
                for plural, attrs in value.items():
                    if isinstance(attrs, list):
                        yield from ((plural, a) for a in attrs if isinstance(a, Attribute))


INTEGER_FILTERS = sorted({(p, a.name): a for p, a in _attributes()
                          if a.is_filter and a.name in INTEGER_COLUMNS
                          and a.name not in TEXT_ATTRIBUTES
                          and (p, a.name) not in PLUGIN_CONVERTED}.items())


@pytest.mark.parametrize("key,attribute", INTEGER_FILTERS, ids=[f"{p}.{n}" for (p, n), _ in
                                                                INTEGER_FILTERS])
def test_integer_filters_are_bounded(key: tuple[str, str], attribute: Attribute) -> None:
    assert attribute.convert_filter is not None, f"{key}: no integer conversion"
    for text in (str(2 ** 63), str(10 ** 23), str(-(2 ** 63) - 1)):
        with pytest.raises((ValueError, v.Invalid)):
            attribute.convert_filter(text)


def test_integer_validators_are_bounded_by_their_column() -> None:
    checked = 0
    for _plural, attribute in _attributes():
        validate = attribute.validate
        if validate is not None and v.int_bits(validate):
            checked += 1
            with pytest.raises(v.Invalid):
                validate(2 ** 63)
    assert checked
