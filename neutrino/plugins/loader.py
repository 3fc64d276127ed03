"""Loading plugins by entry-point alias or by class path, with stevedore.

A configured name is tried as an alias in the namespace, then as an
importable ``module:Class`` or ``module.Class``; when both fail, start-up
stops with one message naming both attempts.
"""
from __future__ import annotations

import importlib
from typing import Any

from stevedore import driver


class PluginLoadError(RuntimeError):
    pass


def load_class(namespace: str, name: str) -> type:
    try:
        mgr = driver.DriverManager(namespace, name, invoke_on_load=False)
        return mgr.driver
    except Exception as alias_exc:  # noqa: BLE001 - reported below with the second attempt
        path = name.replace(":", ".")
        module_name, _, cls_name = path.rpartition(".")
        try:
            return getattr(importlib.import_module(module_name), cls_name)
        except Exception as path_exc:  # noqa: BLE001
            raise PluginLoadError(
                f"cannot load '{name}' from {namespace}: not an alias there "
                f"({alias_exc.__class__.__name__}: {alias_exc}), and not an importable "
                f"class ({path_exc.__class__.__name__}: {path_exc})") from None


def load_driver_class(namespace: str, name: str, base: type, option: str,
                      error: type[Exception] = PluginLoadError) -> type:
    """The class a driver list option names, checked to be a ``base``; any
    failure is ``error`` with a message that starts with the option."""
    try:
        cls = load_class(namespace, name)
    except PluginLoadError as exc:
        raise error(f"{option}: {exc}") from None
    if not (isinstance(cls, type) and issubclass(cls, base)):
        kind = base.__name__.replace("Driver", " driver").lower()
        article = "an" if kind[0] in "aeiou" else "a"
        raise error(f"{option}: '{name}' is not {article} {kind}")
    return cls


def load_core_plugin(conf: Any, db: Any) -> Any:
    if not conf.core_plugin:
        raise PluginLoadError("core_plugin is mandatory")
    cls = load_class("neutrino.core_plugins", conf.core_plugin)
    return cls(conf, db)
