"""The switch's own packet tracer, ``ovs-appctl ofproto/trace`` (host adapter).

Read-only: the tool walks a packet through the bridge's flows as they are
now and changes nothing, so it may run while the agent's loop programs.
"""
from __future__ import annotations

import subprocess

from neutrino.agents.ovs.switch import OvsError


def ofproto_trace(bridge: str, flow: str, ct_states: list[str], timeout: float = 20) -> str:
    """The tool's text for ``flow`` entering ``bridge``; ``ct_states`` are
    what conntrack answers at each recirculation, in turn."""
    argv = ["ovs-appctl", "ofproto/trace", bridge, flow]
    for state in ct_states:
        argv += ["--ct-next", state]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise OvsError(f"ofproto/trace {bridge} {flow}: {proc.stderr.strip()}")
    return proc.stdout
