"""The contract between the core plugin and its resource handlers
(``neutrino.plugins.handler``): every handler has every hook, so the core
calls them without asking what a handler defines."""
from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any, Sequence

import pytest

from neutrino import errors
from neutrino.context import Context
from neutrino.plugins import core as core_mod
from neutrino.plugins.handler import Handler, TableHandler
from tests.inprocess import CountingApp

HOOKS = ("ahead", "before_create", "before_list", "before_delete", "action", "get_for")


def test_every_core_handler_inherits_the_no_op_hooks(tmp_path: Path) -> None:
    core = CountingApp(tmp_path).api.plugin
    for plural, handler in core.handlers.items():
        assert isinstance(handler, Handler), plural
        for name in ("table", "create", "get", "list", "update", "delete", *HOOKS):
            assert hasattr(handler, name), (plural, name)


def test_the_core_plugin_probes_no_handler() -> None:
    source = inspect.getsource(core_mod)
    assert "getattr(handler" not in source
    assert "hasattr(handler" not in source


def test_the_default_hooks_do_nothing_and_unknown_actions_are_not_found() -> None:
    handler = Handler()
    ctx = Context.admin()
    assert handler.before_create(None, ctx, []) is None  # type: ignore[arg-type]
    assert handler.before_delete(None, ctx, "r") is None  # type: ignore[arg-type]
    with pytest.raises(errors.ResourceNotFound):
        handler.action(ctx, "r", "frobnicate", {})


class Rows(TableHandler):
    """The least a table handler defines."""

    def not_found(self, rid: str) -> Exception:
        return errors.ResourceNotFound()

    def to_dicts(self, rows: Sequence[Any]) -> list[dict[str, Any]]:
        return [dict(row._mapping) for row in rows]


def test_a_table_handler_without_updatable_columns_refuses_updates() -> None:
    with pytest.raises(errors.MethodNotAllowed):
        Rows().update(None, Context.admin(), "r", {"x": 1}, None)  # type: ignore[arg-type]


@pytest.mark.parametrize("missing", ["not_found", "to_dicts"])
def test_a_table_handler_missing_not_found_or_to_dicts_cannot_be_made(missing: str) -> None:
    kept = {name: getattr(Rows, name) for name in ("not_found", "to_dicts") if name != missing}
    forgetful = type("Forgetful", (TableHandler,), kept)
    with pytest.raises(TypeError, match=missing):
        forgetful()

