"""An error quotes at most a short prefix of what it refuses: an answer
never grows with the input."""
from __future__ import annotations

from tests.api import _helpers as h


def test_an_error_quotes_a_short_prefix_of_a_long_value(admin) -> None:
    value = "y" * 100_000
    message = h.error(admin.post("/v2.0/networks", {"network": {"name": value}}), 400,
                      "HTTPBadRequest")
    assert "y" * 50 + "...'" in message
    assert len(message) < 200


def test_an_error_about_a_filter_quotes_a_short_prefix(admin) -> None:
    message = h.error(admin.get("/v2.0/networks?limit=" + "z" * 5000), 400, "BadRequest")
    assert "z" * 50 + "..." in message and "z" * 51 not in message
