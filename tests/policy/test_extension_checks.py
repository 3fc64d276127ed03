"""oslo.policy's extension checks, loaded when a rule names one
(``policy/extension_checks.py``)."""
from __future__ import annotations

import subprocess
import sys

from oslo_policy import _parser

import neutrino.policy  # noqa: F401 - sets the checks up, as the server does


def test_a_rule_of_an_extension_check_is_that_check() -> None:
    """A policy file may still name oslo.policy's HTTP checks."""
    from oslo_policy._external import HttpCheck, HttpsCheck
    assert isinstance(_parser.parse_rule("http://127.0.0.1:9/allowed"), HttpCheck)
    assert isinstance(_parser.parse_rule("https://127.0.0.1:9/allowed"), HttpsCheck)
    assert type(_parser.parse_rule("role:admin")).__name__ == "RoleCheck"


def test_rules_without_extension_checks_load_none() -> None:
    """Parsing neutron's rules imports no extension check's module (the
    HTTP one brings requests into every API worker)."""
    code = ("import sys\nimport neutrino.policy\nfrom neutrino.policy import defaults\n"
            "from oslo_policy import _parser\n"
            "[_parser.parse_rule(r.check_str) for r in defaults.rules()]\n"
            "print(sorted({'oslo_policy._external', 'requests'} & set(sys.modules)))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120)
    assert out.stdout.strip() == "[]"
