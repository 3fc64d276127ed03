"""RPC topics and versions, with upstream's names so the bus reads the same.

Compatibility rule: a server endpoint's version is the newest it serves;
it answers every call of the same major version up to that minor. A new
method or argument bumps the minor; removing or changing one bumps the
major (and the server then serves both for one release).
"""
from __future__ import annotations

REPORTS = "q-reports-plugin"  # agents -> server: state reports
PLUGIN = "q-plugin"  # agents -> server: L2/DHCP/security group calls
L3PLUGIN = "q-l3-plugin"  # L3 agents -> server

STATE_VERSION = "1.4"  # report_state (1.0), with resources_synced and more since
