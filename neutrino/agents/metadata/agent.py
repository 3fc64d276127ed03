"""The metadata agent (``neutrino agent metadata``): HTTP on a UNIX socket.

The namespace proxies of this host connect to ``metadata_proxy_socket``.
Each request names the requester (``X-Forwarded-For``) and either its
router or its network; the agent finds the instance (``lookup``) and
forwards the request to the compute metadata API (``nova``). Both a router
and a network named: 400 (only the proxy sets them, so one was forged);
no single port found: 404. Requests are answered by a bounded pool of
threads (``metadata_workers``); state is reported like every agent's.
"""
from __future__ import annotations

import concurrent.futures
import http.server
import logging
import os
import socketserver
import threading
from typing import Any

from oslo_config import cfg

from neutrino.agents.base import Agent
from neutrino.agents.metadata.lookup import InstanceLookup
from neutrino.agents.metadata.nova import Answer, NovaMetadata, text_answer
from neutrino.agents.metadata.rpc import MetadataPluginApi
from neutrino.conf.agents import metadata as metadata_conf

LOG = logging.getLogger(__name__)

NETWORK_ID_HEADER = "X-Neutron-Network-ID"
ROUTER_ID_HEADER = "X-Neutron-Router-ID"


class MetadataService:
    """One request in, one answer out (no sockets: the handler's job)."""

    def __init__(self, lookup: InstanceLookup, nova: NovaMetadata) -> None:
        self.lookup, self.nova = lookup, nova

    def answer(self, method: str, path: str, headers: Any, body: bytes | None) -> Answer:
        remote = headers.get("X-Forwarded-For")
        network_id, router_id = headers.get(NETWORK_ID_HEADER), headers.get(ROUTER_ID_HEADER)
        if network_id and router_id:
            return text_answer(400, f"Both network {network_id} and router {router_id} "
                                    "defined.")
        if not remote or not (network_id or router_id):
            return text_answer(400, "The request names no requester and no "
                                    "network or router.")
        try:
            instance = self.lookup.find(remote, network_id=network_id, router_id=router_id)
        except Exception:  # noqa: BLE001 - the server or the bus away
            LOG.exception("looking up the instance at %s failed", remote)
            return text_answer(500, "An unknown error has occurred. "
                                    "Please try your request again.")
        if instance is None:
            where = f"network {network_id}" if network_id else f"router {router_id}"
            return text_answer(404, f"Instance was not found on {where}.")
        return self.nova.forward(method, path, body, instance.instance_id,
                                 instance.project_id, remote)


class _Handler(http.server.BaseHTTPRequestHandler):
    server: "_UnixHttpServer"
    protocol_version = "HTTP/1.1"

    def address_string(self) -> str:
        return "metadata-proxy"  # a UNIX socket peer has no address

    def log_message(self, format: str, *args: Any) -> None:
        LOG.debug("%s", format % args)

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        answer = self.server.service.answer(self.command, self.path, self.headers, body)
        self.send_response(answer.status)
        for key, value in answer.headers:
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(answer.body)))
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(answer.body)
        self.close_connection = True

    do_GET = do_POST = do_PUT = do_HEAD = do_DELETE = _serve


class _UnixHttpServer(socketserver.UnixStreamServer):
    """Requests answered by a bounded thread pool (upstream's metadata_workers)."""

    def __init__(self, path: str, service: MetadataService, workers: int,
                 backlog: int) -> None:
        self.request_queue_size = backlog
        self.service = service
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=workers,
                                                          thread_name_prefix="metadata")
        super().__init__(path, _Handler)

    def _one(self, request: Any, client_address: Any) -> None:
        try:
            self.finish_request(request, client_address)
        except Exception:  # noqa: BLE001
            self.handle_error(request, client_address)
        finally:
            self.shutdown_request(request)

    def process_request(self, request: Any, client_address: Any) -> None:
        self.pool.submit(self._one, request, client_address)

    def server_close(self) -> None:
        super().server_close()
        self.pool.shutdown(wait=True)


def prepare_socket(path: str) -> None:
    """The socket's directory exists and no stale socket blocks the bind."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), mode=0o755, exist_ok=True)
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


class MetadataAgent(Agent):
    agent_type = "Metadata agent"
    binary = "neutron-metadata-agent"
    topic = "N/A"

    def __init__(self, conf: cfg.ConfigOpts, plugin_rpc: Any = None,
                 host: str | None = None) -> None:
        metadata_conf.register(conf)
        super().__init__(conf, host)
        self.plugin_rpc = plugin_rpc
        self._server: _UnixHttpServer | None = None
        self._serving: threading.Thread | None = None

    def configurations(self) -> dict[str, Any]:
        return {"metadata_proxy_socket": self.conf.metadata_proxy_socket,
                "nova_metadata_host": self.conf.nova_metadata_host,
                "nova_metadata_port": self.conf.nova_metadata_port,
                "log_agent_heartbeats": False}

    def workers(self) -> int:
        configured = self.conf.metadata_workers
        return configured if configured else max(1, (os.cpu_count() or 2) // 2)

    def start(self) -> None:
        """Listen on the socket and report state (threads); returns at once."""
        if self.plugin_rpc is None:
            self.plugin_rpc = MetadataPluginApi(self.conf)
        service = MetadataService(InstanceLookup(self.plugin_rpc.get_ports),
                                  NovaMetadata(self.conf))
        path = self.conf.metadata_proxy_socket
        prepare_socket(path)
        self._server = _UnixHttpServer(path, service, self.workers(),
                                       self.conf.metadata_backlog)
        self._serving = threading.Thread(target=self._server.serve_forever,
                                         name="metadata-socket", daemon=True)
        self._serving.start()
        LOG.info("metadata agent listening on %s", path)
        self.start_reporting()

    def run(self) -> None:
        self.start()
        self._stop.wait()

    def halt(self) -> None:
        """Make ``run`` return (safe from a signal handler)."""
        self._stop.set()

    def stop(self) -> None:
        self._stop.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
            try:
                os.unlink(self.conf.metadata_proxy_socket)
            except FileNotFoundError:
                pass
        super().stop()
        close = getattr(self.plugin_rpc, "close", None)
        if close is not None:
            close()
