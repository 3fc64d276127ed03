"""Runs many ``openstack`` command lines in one process.

Starting the ``openstack`` CLI costs seconds of imports; running each
command as its own process would make the client suite take minutes. This
driver imports python-openstackclient once and then, for every JSON line
``{"argv": [...]}`` read from stdin, runs exactly what the ``openstack``
console script runs (``openstackclient.shell.main(argv)``) with fresh
stdout/stderr buffers, and answers one JSON line
``{"rc": int, "stdout": str, "stderr": str}``.
"""
from __future__ import annotations

import contextlib
import io
import json
import logging
import sys


def run_one(argv: list[str]) -> dict[str, object]:
    from openstackclient import shell

    out, err = io.StringIO(), io.StringIO()
    root = logging.getLogger()
    saved_handlers, saved_level = list(root.handlers), root.level
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = shell.main(argv)
            except SystemExit as exc:  # argparse errors, --help
                rc = exc.code if isinstance(exc.code, int) else 1
    finally:
        # the shell adds console handlers bound to this command's buffers
        for handler in list(root.handlers):
            if handler not in saved_handlers:
                root.removeHandler(handler)
        root.setLevel(saved_level)
    return {"rc": rc, "stdout": out.getvalue(), "stderr": err.getvalue()}


def main() -> None:
    import openstackclient.shell  # noqa: F401 - pay the import cost once, up front

    reply = sys.stdout
    reply.write(json.dumps({"ready": True}) + "\n")
    reply.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        result = run_one(json.loads(line)["argv"])
        reply.write(json.dumps(result) + "\n")
        reply.flush()


if __name__ == "__main__":
    main()
