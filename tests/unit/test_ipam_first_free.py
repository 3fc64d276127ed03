"""The walk behind a nearly full subnet's address choice."""
from __future__ import annotations

from neutrino.ipam.allocator import first_free


def test_first_free_skips_taken_addresses_in_pool_order() -> None:
    assert first_free([(10, 14), (20, 22)], {10, 12, 13}, 4) == [11, 14, 20, 21]


def test_first_free_stops_at_the_count_and_never_walks_the_rest() -> None:
    huge = (2 ** 64, 2 ** 128 - 1)  # an IPv6 /64 pool: finishing it would never end
    assert first_free([huge], {2 ** 64}, 3) == [2 ** 64 + 1, 2 ** 64 + 2, 2 ** 64 + 3]


def test_first_free_of_full_pools_is_empty() -> None:
    assert first_free([(1, 3)], {1, 2, 3}, 10) == []
