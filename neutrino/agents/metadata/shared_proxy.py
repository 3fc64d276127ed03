"""One metadata proxy process for all of a DHCP agent's namespaces (a daemon).

Where ``ns_proxy`` is a process per namespace, this one process listens in
every ``qdhcp-`` namespace that serves metadata: it opens each listening
socket from inside its namespace (``netns_socket``) and serves them all
from one asyncio loop, so a network costs a socket and a file, not a
Python interpreter. What it does per request is ``ns_proxy``'s: the
request goes over the metadata agent's UNIX socket with ``X-Forwarded-For``
(the client's address) and ``X-Neutron-Network-ID`` (the namespace's
network) set by the proxy, never taken from the instance.

Its desired state is a directory of files, one per network (its id as the
name; namespace, address and port as lines), written by the agent, which
then sends SIGHUP; the daemon reconciles (opens the listeners missing,
closes those of files removed or changed) and writes the ids it actually
listens for to the served file. Like dnsmasq it outlives the agent, so a
restarting agent interrupts no instance's metadata, and it is found again
through its pid file. A listener that could not be opened (its address
not yet on the device) is retried a few seconds later.
"""
from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import http.client
import io
import logging
import os
import signal
import sys
from typing import Any

from neutrino.agents.files import write_atomic
from neutrino.agents.metadata.netns_socket import listen_in
from neutrino.agents.metadata.ns_proxy import (
    HOP_BY_HOP,
    _detach,
    _UnixConnection,
    forwarded_headers,
)

LOG = logging.getLogger("neutrino.metadata.shared_proxy")
RETRY_S = 3.0
# a sync writes a file and signals per network: gathered, they cost one
# reading of the directory instead of one each
GATHER_S = 0.1
HEAD_LIMIT = 64 * 1024
Spec = tuple[str, str, int]  # namespace, address, port


def read_desired(directory: str) -> dict[str, Spec]:
    """Network id -> where its listener goes; unreadable or partial files are skipped."""
    out: dict[str, Spec] = {}
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return out
    for name in names:
        if name.startswith(".") or name.endswith(".tmp"):
            continue
        try:
            with open(os.path.join(directory, name), encoding="utf-8") as f:
                namespace, address, port = f.read().split()
            out[name] = (namespace, address, int(port))
        except (OSError, ValueError):
            continue
    return out


class SharedProxy:
    def __init__(self, desired_dir: str, served_file: str, socket_path: str,
                 timeout: float) -> None:
        self.desired_dir, self.served_file = desired_dir, served_file
        self.socket_path, self.timeout = socket_path, timeout
        self.servers: dict[str, tuple[Spec, asyncio.base_events.Server]] = {}
        self.wake = asyncio.Event()
        self.forwarders = concurrent.futures.ThreadPoolExecutor(32, "metadata-forward")

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGHUP, self.wake.set)
        stop = asyncio.Event()
        loop.add_signal_handler(signal.SIGTERM, stop.set)
        loop.add_signal_handler(signal.SIGINT, stop.set)
        self.wake.set()
        waiter = asyncio.ensure_future(stop.wait())
        while not stop.is_set():
            woke = asyncio.ensure_future(self.wake.wait())
            await asyncio.wait({woke, waiter}, return_when=asyncio.FIRST_COMPLETED)
            woke.cancel()
            if stop.is_set():
                break
            await asyncio.sleep(GATHER_S)
            self.wake.clear()
            if not await self.reconcile():
                loop.call_later(RETRY_S, self.wake.set)
        for _, server in self.servers.values():
            server.close()
        self.forwarders.shutdown(wait=False, cancel_futures=True)

    async def reconcile(self) -> bool:
        """Make the listeners those of the desired files; False if some could not open."""
        desired = read_desired(self.desired_dir)
        for net, (spec, server) in list(self.servers.items()):
            if desired.get(net) != spec:
                server.close()
                del self.servers[net]
                LOG.info("stopped serving network %s in %s", net, spec[0])
        missing = [(net, spec) for net, spec in desired.items() if net not in self.servers]
        complete = True
        if missing:
            loop = asyncio.get_running_loop()
            sockets = await loop.run_in_executor(None, listen_in, [s for _, s in missing])
            for (net, spec), sock in zip(missing, sockets):
                if isinstance(sock, OSError):
                    LOG.warning("cannot listen for network %s on %s:%d in %s: %s",
                                net, spec[1], spec[2], spec[0], sock)
                    complete = False
                    continue
                server = await asyncio.start_server(self._handler(net), sock=sock,
                                                    limit=HEAD_LIMIT)
                self.servers[net] = (spec, server)
            LOG.info("serving %d networks", len(self.servers))
        write_atomic(self.served_file, "".join(f"{n}\n" for n in sorted(self.servers)))
        return complete

    def _handler(self, network_id: str) -> Any:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                await self._serve(network_id, reader, writer)
            except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError,
                    asyncio.TimeoutError):
                pass
            finally:
                writer.close()
        return handle

    async def _serve(self, network_id: str, reader: asyncio.StreamReader,
                     writer: asyncio.StreamWriter) -> None:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), self.timeout)
        request_line, _, rest = head.partition(b"\r\n")
        try:
            method, target, _version = request_line.decode("latin-1").split(" ", 2)
            headers = http.client.parse_headers(io.BytesIO(rest))
            length = int(headers.get("Content-Length") or 0)
        except (ValueError, http.client.HTTPException):
            await self._reply(writer, "GET", 400, "Bad Request", [], b"400 Bad Request\n")
            return
        body = await reader.readexactly(length) if length > 0 else None
        peer = writer.get_extra_info("peername")
        client = str(peer[0]) if peer else ""
        if client.startswith("::ffff:"):
            client = client[len("::ffff:"):]
        forwarded = forwarded_headers(headers, client, "X-Neutron-Network-ID", network_id)
        loop = asyncio.get_running_loop()
        status, reason, out_headers, content = await loop.run_in_executor(
            self.forwarders, self._forward, method, target, body, forwarded)
        await self._reply(writer, method, status, reason, out_headers, content)

    def _forward(self, method: str, target: str, body: bytes | None,
                 headers: dict[str, str]) -> tuple[int, str, list[tuple[str, str]], bytes]:
        """The request over the agent's socket (a forwarder thread); 503 when none answers."""
        conn = _UnixConnection(self.socket_path, self.timeout)
        try:
            conn.request(method, target, body=body, headers=headers)
            resp = conn.getresponse()
            content = resp.read()
            return resp.status, resp.reason, [(k, v) for k, v in resp.getheaders()
                                              if k.lower() not in HOP_BY_HOP], content
        except (OSError, http.client.HTTPException) as exc:
            LOG.warning("metadata agent unreachable on %s: %s", self.socket_path, exc)
            return (503, "Service Unavailable", [("Content-Type", "text/plain")],
                    b"503 Service Unavailable\n\nNo metadata agent answers.\n")
        finally:
            conn.close()

    @staticmethod
    async def _reply(writer: asyncio.StreamWriter, method: str, status: int, reason: str,
                     headers: list[tuple[str, str]], body: bytes) -> None:
        lines = [f"HTTP/1.1 {status} {reason}"] + [f"{k}: {v}" for k, v in headers] + [
            f"Content-Length: {len(body)}", "Connection: close", "", ""]
        writer.write("\r\n".join(lines).encode("latin-1"))
        if method != "HEAD":
            writer.write(body)
        await writer.drain()


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="neutrino-metadata-shared-proxy")
    p.add_argument("--desired-dir", required=True, help="one file per network to serve")
    p.add_argument("--served-file", required=True, help="written: the networks served")
    p.add_argument("--socket", required=True, help="the metadata agent's UNIX socket")
    p.add_argument("--pid-file", required=True)
    p.add_argument("--log-file")
    p.add_argument("--timeout", type=float, default=65.0)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse(sys.argv[1:] if argv is None else argv)
    # a SIGHUP sent as soon as the pid file names the child must not kill it
    # before its loop handles them: the first reconcile reads everything anyway
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    os.makedirs(args.desired_dir, exist_ok=True)
    os.makedirs(os.path.dirname(os.path.abspath(args.pid_file)), exist_ok=True)
    _detach(args.pid_file, args.log_file)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(message)s")
    proxy = SharedProxy(args.desired_dir, args.served_file, args.socket, args.timeout)
    asyncio.run(proxy.run())
    # the next start must not believe stale ids served
    write_atomic(args.served_file, "")


if __name__ == "__main__":
    main()
