"""An API worker process under granian's master: the front of ``cmd/front.py``
on the listening socket granian's master opened and shares with every
worker.

granian's master forks the workers, replaces those that die and stops
them (``cmd/serve.py``); its HTTP layer is not used: it answered what it
could not parse or found too large itself, with an empty body, before the
app saw the request. The arguments are those granian's worker target is
given; only the socket and the front are needed.
"""
from __future__ import annotations

import os
import signal
import socket
from typing import Any

from neutrino.cmd.front import Front
from neutrino.cmd.supervise import STOPS

BACKLOG = 1024  # granian's default


def serve(worker_id: int, front: Front, sock: Any, *granian_args: Any, **granian_kwargs: Any) -> None:
    spec, shared = sock
    # On Linux each worker binds its own socket to the address
    # (SO_REUSEPORT: the kernel spreads the connections); elsewhere the
    # master's is shared. A descriptor of our own: the holder's is granian's.
    holder = spec.build() if shared is None else shared
    listener = socket.socket(fileno=os.dup(holder.get_fd()))
    listener.listen(BACKLOG)  # granian's Rust worker would listen as it starts
    stop: list[int] = []
    for sig in STOPS:
        signal.signal(sig, lambda signum, frame: stop.append(signum))
    front.serve(listener, lambda: bool(stop))
