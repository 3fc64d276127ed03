"""The metadata proxy of one router or network namespace (a small daemon).

Run inside the namespace (``ip netns exec``); it listens where instances'
metadata requests arrive (the router's ``metadata_port``, or
169.254.169.254:80 in a DHCP namespace) and passes each request over the
metadata agent's UNIX socket. It is the only place that knows who asked:
``X-Forwarded-For`` becomes the client's address and
``X-Neutron-Router-ID``/``X-Neutron-Network-ID`` this namespace's id; what
the instance sent under those names is dropped, so they cannot be forged.

It binds first and then detaches, writing the child's pid to ``--pid-file``,
so a zero exit means it serves (the same discipline as dnsmasq). Only the
standard library is imported: one runs per router and per network.
"""
from __future__ import annotations

import argparse
import http.client
import http.server
import logging
import os
import socket
import sys
from typing import Any

IDENTITY_HEADERS = ("X-Forwarded-For", "X-Neutron-Router-ID", "X-Neutron-Network-ID")
HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te",
              "trailer", "upgrade", "content-length"}
LOG = logging.getLogger("neutrino.metadata.ns_proxy")


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self.socket_path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        sock.connect(self.socket_path)
        self.sock = sock


def forwarded_headers(received: Any, client: str, id_header: str, id_value: str
                      ) -> dict[str, str]:
    """What the agent is sent: the request's own headers without hop-by-hop
    and identity ones, then this proxy's identity headers."""
    drop = {h.lower() for h in IDENTITY_HEADERS} | HOP_BY_HOP | {"host"}
    out = {k: v for k, v in received.items() if k.lower() not in drop}
    out["X-Forwarded-For"] = client
    out[id_header] = id_value
    return out


def make_handler(socket_path: str, id_header: str, id_value: str,
                 timeout: float) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            LOG.info("%s %s", self.address_string(), format % args)

        def _reply(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
            self.send_response(status)
            for key, value in headers:
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)
            self.close_connection = True

        def _proxy(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            client = self.client_address[0]
            if client.startswith("::ffff:"):
                client = client[len("::ffff:"):]
            headers = forwarded_headers(self.headers, client, id_header, id_value)
            conn = _UnixConnection(socket_path, timeout)
            try:
                conn.request(self.command, self.path, body=body, headers=headers)
                resp = conn.getresponse()
                content = resp.read()
            except (OSError, http.client.HTTPException) as exc:
                LOG.warning("metadata agent unreachable on %s: %s", socket_path, exc)
                self._reply(503, [("Content-Type", "text/plain")],
                            b"503 Service Unavailable\n\nNo metadata agent answers.\n")
                return
            finally:
                conn.close()
            self._reply(resp.status, [(k, v) for k, v in resp.getheaders()
                                      if k.lower() not in HOP_BY_HOP], content)

        do_GET = do_POST = do_PUT = do_HEAD = do_DELETE = _proxy

    return Handler


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: Any) -> None:
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, handler)


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="neutrino-metadata-ns-proxy")
    p.add_argument("--bind-address", default="0.0.0.0")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--socket", required=True, help="the metadata agent's UNIX socket")
    p.add_argument("--pid-file", required=True)
    p.add_argument("--log-file")
    p.add_argument("--timeout", type=float, default=65.0)
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("--router-id")
    who.add_argument("--network-id")
    return p.parse_args(argv)


def _detach(pid_file: str, log_file: str | None) -> None:
    """Parent: write the child's pid and exit 0. Child: a session of its own,
    output to the log file."""
    pid = os.fork()
    if pid:
        tmp = f"{pid_file}.tmp"
        with open(tmp, "w", encoding="ascii") as f:
            f.write(f"{pid}\n")
        os.replace(tmp, pid_file)
        os._exit(0)
    os.setsid()
    sink = os.open(log_file or os.devnull, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(sink, 1)
    os.dup2(sink, 2)


def main(argv: list[str] | None = None) -> None:
    args = parse(sys.argv[1:] if argv is None else argv)
    if args.router_id:
        id_header, id_value = "X-Neutron-Router-ID", args.router_id
    else:
        id_header, id_value = "X-Neutron-Network-ID", args.network_id
    handler = make_handler(args.socket, id_header, id_value, args.timeout)
    server = _Server((args.bind_address, args.port), handler)  # bind errors: exit 1
    os.makedirs(os.path.dirname(os.path.abspath(args.pid_file)), exist_ok=True)
    _detach(args.pid_file, args.log_file)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(message)s")
    LOG.info("serving %s=%s on %s:%d", id_header, id_value, args.bind_address, args.port)
    server.serve_forever()


if __name__ == "__main__":
    main()
