"""Parsing of the range options into numbers, refusing what cannot be used.

Every error names its option and the offending entry in one line, because
it ends the server's start-up and the operator must find it in the file.
"""
from __future__ import annotations

from typing import Iterable

from neutrino.plugins.ml2.exceptions import Ml2ConfigError

MIN_VLAN_TAG, MAX_VLAN_TAG = 1, 4094
MIN_VNI, MAX_VNI = 1, 2 ** 24 - 1
MIN_GRE_ID, MAX_GRE_ID = 1, 2 ** 32 - 1

Range = tuple[int, int]


def _int(text: str, option: str, entry: str, what: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise Ml2ConfigError(f"{option}: invalid entry '{entry}': "
                             f"{text.strip()!r} is not a valid {what}") from None


def _bounded(lo: int, hi: int, bounds: Range, option: str, entry: str, what: str) -> Range:
    for value in (lo, hi):
        if not bounds[0] <= value <= bounds[1]:
            raise Ml2ConfigError(f"{option}: invalid entry '{entry}': {value} is not a "
                                 f"valid {what} ({bounds[0]} through {bounds[1]})")
    if hi < lo:
        raise Ml2ConfigError(f"{option}: invalid entry '{entry}': end of range is less "
                             f"than its start")
    return lo, hi


def vlan_ranges(entries: Iterable[str],
                option: str = "[ml2_type_vlan] network_vlan_ranges") -> dict[str, list[Range]]:
    """``physnet`` or ``physnet:min:max`` entries -> physnet: ranges.

    A bare physnet is known to provider networks but gives projects nothing.
    """
    out: dict[str, list[Range]] = {}
    for raw in entries:
        entry = raw.strip()
        if not entry:
            continue
        parts = entry.split(":")
        physnet = parts[0].strip()
        if not physnet or len(parts) not in (1, 3):
            raise Ml2ConfigError(f"{option}: invalid entry '{entry}': expected "
                                 f"<physical_network> or <physical_network>:<min>:<max>")
        ranges = out.setdefault(physnet, [])
        if len(parts) == 3:
            lo = _int(parts[1], option, entry, "VLAN tag")
            hi = _int(parts[2], option, entry, "VLAN tag")
            ranges.append(_bounded(lo, hi, (MIN_VLAN_TAG, MAX_VLAN_TAG), option, entry,
                                   "VLAN tag"))
    return out


def tunnel_ranges(entries: Iterable[str], option: str, bounds: Range,
                  what: str) -> list[Range]:
    """``min:max`` entries -> ranges within ``bounds``."""
    out: list[Range] = []
    for raw in entries:
        entry = raw.strip()
        if not entry:
            continue
        parts = entry.split(":")
        if len(parts) != 2:
            raise Ml2ConfigError(f"{option}: invalid entry '{entry}': expected <min>:<max>")
        lo = _int(parts[0], option, entry, what)
        hi = _int(parts[1], option, entry, what)
        out.append(_bounded(lo, hi, bounds, option, entry, what))
    return out


def physnet_mtus(entries: Iterable[str],
                 option: str = "[ml2] physical_network_mtus") -> dict[str, int]:
    """``physnet:mtu`` entries -> physnet: mtu."""
    out: dict[str, int] = {}
    for raw in entries:
        entry = raw.strip()
        if not entry:
            continue
        physnet, sep, mtu = entry.rpartition(":")
        if not sep or not physnet.strip():
            raise Ml2ConfigError(f"{option}: invalid entry '{entry}': expected "
                                 f"<physical_network>:<mtu>")
        value = _int(mtu, option, entry, "MTU")
        if value < 68:
            raise Ml2ConfigError(f"{option}: invalid entry '{entry}': MTU must be at least 68")
        out[physnet.strip()] = value
    return out


def merge(ranges: Iterable[Range]) -> list[Range]:
    """Overlapping or adjacent ranges joined, sorted: the ids to keep."""
    out: list[list[int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return [(lo, hi) for lo, hi in out]


def subtract(ranges: Iterable[Range], holes: Iterable[Range]) -> list[Range]:
    """The ids of ``ranges`` that no hole holds, as merged ranges."""
    out: list[Range] = []
    cut = merge(holes)
    for lo, hi in merge(ranges):
        for h_lo, h_hi in cut:
            if h_hi < lo or h_lo > hi:
                continue
            if h_lo > lo:
                out.append((lo, h_lo - 1))
            lo = h_hi + 1
            if lo > hi:
                break
        if lo <= hi:
            out.append((lo, hi))
    return out


def contains(ranges: Iterable[Range], value: int) -> bool:
    return any(lo <= value <= hi for lo, hi in ranges)
