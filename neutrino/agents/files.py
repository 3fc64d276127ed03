"""Small text files an agent shares with the daemons it runs (dnsmasq's
hosts and options, the shared metadata proxy's desired and served files).

The daemons read them at any moment, so a file is replaced whole, never
seen half written; and a file that is not there (yet, or any more) reads as
None, which a caller compares with what it wants rather than catching.
"""
from __future__ import annotations

import os


def read_text(path: str) -> str | None:
    """The file's text, or None when it cannot be read."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError:
        return None


def write_atomic(path: str, text: str) -> None:
    """Replace ``path`` with ``text`` through a ``.tmp`` sibling and a
    rename, so a reader sees the old file or the new one."""
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)
