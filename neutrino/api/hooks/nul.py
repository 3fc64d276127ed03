"""Refusal of text carrying NUL characters, in paths, query strings and bodies.

No Neutron value has a use for NUL, and PostgreSQL cannot store one in a
text column or a JSON document: refusing it at the door answers 400 on every
backend instead of an error from whichever database is behind. A body is
checked by ``body.parse_json``, in the walk that bounds its nesting.
"""
from __future__ import annotations

from typing import Any

import falcon

from neutrino import errors

NUL = "\x00"


def refusal() -> errors.InvalidInput:
    return errors.InvalidInput(error_message="NUL characters are not allowed")


def check_value(value: Any) -> None:
    """Raise if any string in ``value`` (a query parameter, a list of them,
    any decoded JSON), key or value, has NUL.

    Iterative, so a deeply nested document cannot exhaust the stack here.
    """
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if NUL in item:
                raise refusal()
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)


class NulHook:
    """Falcon middleware: a path or query string with NUL is refused
    before routing reaches a controller."""

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        if NUL in req.path:
            raise refusal()
        for key, value in req.params.items():
            check_value(key)
            check_value(value)
