"""Work done inside a named network namespace without a process for it.

``ip netns exec`` costs two executables (and a private mount namespace)
each time; entering the namespace with ``setns`` from a thread of this
process costs a system call. ``setns`` moves only the calling thread, so
``run_in`` does the work on a short-lived thread of its own, which goes
back to its original namespace before it ends; a process forked from that
thread (``subprocess``) is born in the namespace. Files under
``/proc/sys/net`` opened there are that namespace's settings.
Only the standard library: the metadata proxy daemon imports this.
"""
from __future__ import annotations

import ctypes
import os
import threading
from typing import Callable, TypeVar

CLONE_NEWNET = 0x40000000
NETNS_DIR = "/run/netns"  # where ``ip netns add`` mounts named namespaces

T = TypeVar("T")
_libc = ctypes.CDLL(None, use_errno=True)


def setns(fd: int) -> None:
    """Move the calling thread into the network namespace ``fd`` refers to."""
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def open_namespace(namespace: str) -> int:
    return os.open(os.path.join(NETNS_DIR, namespace), os.O_RDONLY)


def run_in(namespace: str, fn: Callable[[], T]) -> T:
    """``fn()`` on a thread inside ``namespace``; its result, or its exception."""
    result: list[T] = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
            try:
                fd = open_namespace(namespace)
                try:
                    setns(fd)
                finally:
                    os.close(fd)
                try:
                    result.append(fn())
                finally:
                    setns(home)
            finally:
                os.close(home)
        except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
            failed.append(exc)

    worker = threading.Thread(target=run, name=f"in-{namespace}"[:15])
    worker.start()
    worker.join()
    if failed:
        raise failed[0]
    return result[0]


def write_sysctls(namespace: str, settings: dict[str, str]) -> None:
    """``sysctl -w key=value ...`` inside ``namespace`` (``net.`` keys), in order."""
    def write() -> None:
        for key, value in settings.items():
            with open("/proc/sys/" + key.replace(".", "/"), "w", encoding="ascii") as f:
                f.write(value)
    run_in(namespace, write)
