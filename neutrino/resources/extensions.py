"""Descriptors of API extensions, as ``GET /v2.0/extensions`` shows them.

Only the descriptors live here; whether an alias is listed depends on the
loaded plugins declaring support for it (``supported_extension_aliases``).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ExtensionDescriptor:
    alias: str
    name: str
    description: str
    updated: str

    def as_dict(self) -> dict[str, object]:
        return {"name": self.name, "alias": self.alias,
                "description": self.description, "updated": self.updated,
                "links": []}


# Upstream's descriptors (name, description, updated) of every alias it
# ships, as GET /v2.0/extensions shows them: clients and tempest read these
# strings, so they are data kept exactly, not prose of ours.
_DESCRIPTORS = Path(__file__).with_name("extension_descriptors.json")

KNOWN: dict[str, ExtensionDescriptor] = {
    alias: ExtensionDescriptor(alias, d["name"], d["description"], d["updated"])
    for alias, d in json.loads(_DESCRIPTORS.read_text()).items()
}


def described(alias: str) -> ExtensionDescriptor:
    """The descriptor of an alias neutrino ships: its words live only in the
    JSON file, a plugin names the alias and never restates them."""
    return KNOWN[alias]


def register(descriptor: ExtensionDescriptor) -> None:
    """Let a plugin or third-party package add the descriptor of its alias."""
    KNOWN[descriptor.alias] = descriptor
