"""``neutrino serve`` refuses mechanism drivers it cannot load, in one line."""
from __future__ import annotations

from pathlib import Path

from tests.ml2.test_startup_refusals import _one_error_line, _serve


def test_unknown_mechanism_driver_stops_startup_naming_the_option(tmp_path: Path) -> None:
    line = _one_error_line(_serve(tmp_path, "[ml2]\nmechanism_drivers = openvswitch,nosuchmech"))
    assert "[ml2] mechanism_drivers" in line and "nosuchmech" in line
    assert "not an alias" in line and "not an importable class" in line


def test_non_driver_class_path_stops_startup(tmp_path: Path) -> None:
    line = _one_error_line(_serve(tmp_path, "[ml2]\nmechanism_drivers = "
                                            "neutrino.plugins.ml2.mech_api.NetworkContext"))
    assert "[ml2] mechanism_drivers" in line and "is not a mechanism driver" in line


def test_an_extension_driver_path_that_is_no_extension_driver_stops_startup(
        tmp_path: Path) -> None:
    line = _one_error_line(_serve(tmp_path, "[ml2]\nextension_drivers = "
                                            "neutrino.plugins.ml2.mech_api.NetworkContext"))
    assert "[ml2] extension_drivers" in line and "is not an extension driver" in line
