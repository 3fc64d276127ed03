"""A child process's tie to the process that started it (a utility of every layer)."""
from __future__ import annotations

import ctypes
import os
import signal


def die_with_parent() -> None:
    """Have the kernel end this process when its parent dies, so a server's
    master killed without its clean-up (SIGKILL) leaves no API worker or RPC
    process behind (Linux; elsewhere a no-op)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() == 1:  # the parent died before the request took effect
        os.kill(os.getpid(), signal.SIGTERM)
