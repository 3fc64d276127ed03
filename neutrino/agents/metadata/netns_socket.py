"""Listening sockets opened inside named network namespaces.

A socket belongs to the network namespace it was created in, whatever the
namespace of the process that later accepts on it; so one process can
listen in many namespaces by entering each one just long enough to create
and bind a socket. ``setns`` moves only the calling thread, so each batch
runs on a thread of its own that returns to its original namespace before
it ends (a thread left elsewhere would open later sockets there).
Only the standard library: the proxy daemon imports this.
"""
from __future__ import annotations

import os
import socket
import threading
from typing import Iterable

from neutrino.agents.netns import open_namespace, setns


def _listen(address: str, port: int, backlog: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((address, port))
        sock.listen(backlog)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


def listen_in(wanted: Iterable[tuple[str, str, int]], backlog: int = 128
              ) -> list[socket.socket | OSError]:
    """For each (namespace, address, port), a listening socket bound there,
    or the error that prevented it (a missing namespace, an address not
    yet on its device, a port in use), in the same order."""
    out: list[socket.socket | OSError] = []
    failed: list[BaseException] = []

    def run() -> None:
        home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        try:
            for namespace, address, port in wanted:
                try:
                    fd = open_namespace(namespace)
                except OSError as exc:
                    out.append(exc)
                    continue
                try:
                    setns(fd)
                    out.append(_listen(address, port, backlog))
                except OSError as exc:
                    out.append(exc)
                finally:
                    os.close(fd)
                    setns(home)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            failed.append(exc)
        finally:
            os.close(home)

    worker = threading.Thread(target=run, name="netns-listen")
    worker.start()
    worker.join()
    if failed:
        for item in out:
            if isinstance(item, socket.socket):
                item.close()
        raise failed[0]
    return out
