"""The pure parts of the request limits: reading a body under a limit,
shortening quoted values, measuring nesting (the front's own in
test_front.py)."""
from __future__ import annotations

import io

import pytest

from neutrino import errors
from neutrino.api.hooks.body import check_document
from neutrino.api.hooks.translation import shortened
from neutrino.api.limits import TooLarge, read_body


class Trickle(io.RawIOBase):
    """A stream that gives a few bytes a read, as a socket does."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def read(self, size: int = -1) -> bytes:
        chunk, self.data = self.data[:3], self.data[3:]
        return chunk


def test_a_declared_length_over_the_limit_is_refused_without_reading() -> None:
    stream = Trickle(b"x" * 100)
    with pytest.raises(TooLarge):
        read_body(stream, 11, 10)
    assert len(stream.data) == 100


def test_a_body_of_unknown_length_is_read_only_just_past_the_limit() -> None:
    stream = Trickle(b"x" * 100)
    with pytest.raises(TooLarge):
        read_body(stream, None, 10)
    assert len(stream.data) >= 100 - 12


def test_a_body_is_read_whole_from_small_reads() -> None:
    assert read_body(Trickle(b"0123456789"), 10, 10) == b"0123456789"
    assert read_body(Trickle(b"0123456789"), None, 10) == b"0123456789"


def test_a_short_body_ends_where_the_client_stopped() -> None:
    assert read_body(Trickle(b"0123"), 10, 10) == b"0123"


def test_a_policy_rule_name_is_not_a_value_to_shorten() -> None:
    message = ("(rule:update_router and rule:update_router:external_gateway_info:"
               "external_fixed_ips) is disallowed by policy")
    assert shortened(message) == message


def test_ordinary_messages_are_unchanged() -> None:
    message = ("Unable to complete operation on network 4f5c3d8e-8a0e-4a47-9c52-"
               "0cbb0a1b2c3d. There are one or more ports still in use on the network.")
    assert shortened(message) == message


def test_a_long_value_keeps_a_prefix_and_its_quotes() -> None:
    assert shortened(f"'{'v' * 10_000}' is not a valid UUID") == \
        f"'{'v' * 50}...' is not a valid UUID"


def test_a_value_as_long_as_an_attribute_allows_is_quoted_whole() -> None:
    message = f"'{'a.' * 128}a' exceeds the 255 character FQDN limit."
    assert shortened(message) == message


def test_a_long_message_of_short_words_is_bounded() -> None:
    assert len(shortened("ab " * 100_000)) < 2100


@pytest.mark.parametrize("data, deepest", [
    ({}, 1), ([], 1), (1, 0), ({"a": [1, {"b": "c"}]}, 3), ([[[[]]]], 4),
])
def test_depth_is_the_deepest_nesting_of_lists_and_objects(data: object, deepest: int) -> None:
    check_document(data, deepest)
    if deepest > 0:
        with pytest.raises(errors.HTTPBadRequest, match="nested deeper than"):
            check_document(data, deepest - 1)


def test_depth_of_a_very_deep_body_is_measured_without_recursion() -> None:
    data: list = []
    for _ in range(100_000):
        data = [data]
    with pytest.raises(errors.HTTPBadRequest, match="nested deeper than 32 levels"):
        check_document(data, 32)


@pytest.mark.parametrize("data", [
    "\x00", {"k\x00": 1}, {"a": ["b", {"c": "d\x00"}]}, [[["\x00"]]],
])
def test_nul_in_any_string_of_a_body_is_refused(data: object) -> None:
    with pytest.raises(errors.InvalidInput, match="NUL characters are not allowed"):
        check_document(data)


@pytest.mark.parametrize("data", [
    ["\x00", [[[]]]], [[[[]]], "\x00"], {"k\x00": [[[]]]}, [[["\x00", []]]],
])
def test_a_body_too_deep_and_holding_nul_is_refused_as_too_deep(data: object) -> None:
    with pytest.raises(errors.HTTPBadRequest, match="nested deeper than 3 levels"):
        check_document(data, 3)
