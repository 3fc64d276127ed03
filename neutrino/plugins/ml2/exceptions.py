"""Start-up errors of ML2 configuration.

They subclass the plugin loader's error so ``neutrino serve`` prints them as
one line and exits, naming the option at fault.
"""
from __future__ import annotations

from neutrino.errors import NeutronException
from neutrino.plugins.loader import PluginLoadError


class Ml2ConfigError(PluginLoadError):
    """An ML2 option cannot be used: unknown driver, bad range, missing type."""


class MechanismDriverError(NeutronException):
    """A mechanism driver failed; named after neutron-lib's error, 500 like it."""

    message = "%(method)s failed."
