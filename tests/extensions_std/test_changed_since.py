"""``changed_since`` with filter validation on (upstream's default).

Upstream 29 registers the filter in its timestamp plugin but its filter
validation, on by default, refuses it on every collection (checked against
a real Neutron 29: ``GET /v2.0/networks?changed_since=...`` answers 400
``['changed_since'] is invalid attribute for filtering``). Clients that
send it get exactly that here too.
"""
from __future__ import annotations

import pytest

from tests.api import _helpers as h


@pytest.mark.parametrize("collection", [
    "networks", "subnets", "ports", "subnetpools", "rbac-policies", "address-scopes",
    "metering/metering-labels"])
@pytest.mark.parametrize("value", ["2020-01-01T00:00:00Z", "garbage"])
def test_changed_since_is_refused_as_upstream_29_refuses_it(admin, collection, value):
    msg = h.error(admin.get(f"/v2.0/{collection}?changed_since={value}"), 400,
                  "HTTPBadRequest")
    assert msg == "['changed_since'] is invalid attribute for filtering"
