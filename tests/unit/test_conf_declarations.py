"""Options are declared in ``neutrino/conf`` only, so that each has one
declaration and every process reads the same one."""
from __future__ import annotations

import re
from pathlib import Path

import neutrino

PACKAGE = Path(neutrino.__file__).parent
DECLARATION = re.compile(r"\bcfg\.\w*Opt\(")


def test_no_module_outside_conf_declares_an_option() -> None:
    declaring = [str(path.relative_to(PACKAGE)) for path in sorted(PACKAGE.rglob("*.py"))
                 if path.relative_to(PACKAGE).parts[0] != "conf"
                 and DECLARATION.search(path.read_text())]
    assert declaring == []
