"""``neutrino serve`` refuses ML2 options it cannot use, in one line naming them."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def _serve(tmp_path: Path, ml2_text: str) -> subprocess.CompletedProcess[str]:
    conf = tmp_path / "neutron.conf"
    conf.write_text(f"[DEFAULT]\nauth_strategy = noauth\nstate_path = {tmp_path}/var\n"
                    f"bind_host = 127.0.0.1\nbind_port = 1\n{ml2_text}\n")
    return subprocess.run([sys.executable, "-m", "neutrino.cmd.main", "serve",
                           "--config-file", str(conf)], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)


def _one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if "configuration error" in line]
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.mark.parametrize("ml2_text, option, detail", [
    ("[ml2_type_vlan]\nnetwork_vlan_ranges = physnet1:10:5",
     "[ml2_type_vlan] network_vlan_ranges", "physnet1:10:5"),
    ("[ml2_type_vlan]\nnetwork_vlan_ranges = physnet1:abc:5",
     "[ml2_type_vlan] network_vlan_ranges", "abc"),
    ("[ml2_type_vlan]\nnetwork_vlan_ranges = physnet1:0:4095",
     "[ml2_type_vlan] network_vlan_ranges", "not a valid VLAN tag"),
    ("[ml2_type_vxlan]\nvni_ranges = abc", "[ml2_type_vxlan] vni_ranges", "abc"),
    ("[ml2_type_vxlan]\nvni_ranges = 100:1", "[ml2_type_vxlan] vni_ranges", "100:1"),
    ("[ml2_type_gre]\ntunnel_id_ranges = 1:99999999999", "[ml2_type_gre] tunnel_id_ranges",
     "99999999999"),
    ("[ml2_type_geneve]\nvni_ranges = 1:16777216", "[ml2_type_geneve] vni_ranges",
     "16777216"),
    ("[ml2]\nphysical_network_mtus = physnet1", "[ml2] physical_network_mtus", "physnet1"),
])
def test_invalid_range_stops_startup_naming_the_option(tmp_path: Path, ml2_text: str,
                                                       option: str, detail: str) -> None:
    line = _one_error_line(_serve(tmp_path, ml2_text))
    assert option in line and detail in line


def test_unknown_type_driver_stops_startup_naming_both_attempts(tmp_path: Path) -> None:
    line = _one_error_line(_serve(tmp_path, "[ml2]\ntype_drivers = local,nosuchtype"))
    assert "[ml2] type_drivers" in line and "nosuchtype" in line
    assert "not an alias" in line and "not an importable class" in line


def test_tenant_network_type_without_driver_stops_startup(tmp_path: Path) -> None:
    line = _one_error_line(_serve(tmp_path, "[ml2]\ntype_drivers = local,flat\n"
                                            "tenant_network_types = vxlan"))
    assert "[ml2] tenant_network_types" in line and "'vxlan'" in line


def test_external_network_type_without_driver_stops_startup(tmp_path: Path) -> None:
    line = _one_error_line(_serve(tmp_path, "[ml2]\ntype_drivers = local\n"
                                            "external_network_type = vlan"))
    assert "[ml2] external_network_type" in line and "'vlan'" in line
