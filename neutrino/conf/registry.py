"""Registering options that several processes (and oslo libraries) may
declare under the same name."""
from __future__ import annotations

from typing import Iterable

from oslo_config import cfg


def register_missing(conf: cfg.ConfigOpts, opts: Iterable[cfg.Opt],
                     group: str | None = None) -> None:
    """Register options that are not registered yet.

    Several agents (and oslo libraries) declare options of the same name,
    sometimes with other help texts; whichever module registered one first
    keeps it, and registering again must not stop the process."""
    for opt in opts:
        try:
            conf.register_opt(opt, group)
        except cfg.DuplicateOptError:
            pass
