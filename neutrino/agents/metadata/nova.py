"""Forward one metadata request to the compute metadata API, signed (adapter).

The request goes to ``nova_metadata_protocol://nova_metadata_host:port`` with
the instance's path and query, and only the headers upstream sends:
``X-Forwarded-For``, ``X-Instance-ID`` (the port's device_id),
``X-Tenant-ID`` (the port's project) and ``X-Instance-ID-Signature``, the
hex HMAC-SHA256 of the instance id keyed with the shared secret, by which
the compute service trusts the other two. Its answers come back as they are
for the codes upstream passes on; a compute service that cannot be reached
is 503, any other code 500.
"""
from __future__ import annotations

import dataclasses
import hashlib
import hmac
import http.client
import logging
import socket
import ssl
from typing import Any

LOG = logging.getLogger(__name__)

PASSED_ON = frozenset({200, 400, 403, 404, 409, 500, 502, 503, 504})
HOP_BY_HOP = frozenset({"connection", "keep-alive", "transfer-encoding", "content-length",
                        "proxy-connection", "te", "trailer", "upgrade"})


def sign_instance_id(secret: str, instance_id: str) -> str:
    return hmac.new(secret.encode("utf-8"), instance_id.encode("utf-8"),
                    hashlib.sha256).hexdigest()


@dataclasses.dataclass
class Answer:
    status: int
    headers: list[tuple[str, str]]
    body: bytes


def text_answer(status: int, message: str) -> Answer:
    body = f"{status} {http.client.responses.get(status, '')}\n\n{message}\n".encode()
    return Answer(status, [("Content-Type", "text/plain; charset=UTF-8")], body)


class NovaMetadata:
    def __init__(self, conf: Any) -> None:
        self.host = conf.nova_metadata_host
        self.port = conf.nova_metadata_port
        self.https = conf.nova_metadata_protocol == "https"
        self.secret = conf.metadata_proxy_shared_secret or ""
        self.timeout = conf.nova_metadata_timeout
        self._ssl = self._context(conf) if self.https else None

    @staticmethod
    def _context(conf: Any) -> ssl.SSLContext:
        ctx = ssl.create_default_context(cafile=conf.auth_ca_cert or None)
        if conf.nova_metadata_insecure:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        if conf.nova_client_cert and conf.nova_client_priv_key:
            ctx.load_cert_chain(conf.nova_client_cert, conf.nova_client_priv_key)
        return ctx

    def headers(self, instance_id: str, project_id: str, forwarded_for: str) -> dict[str, str]:
        return {"X-Forwarded-For": forwarded_for, "X-Instance-ID": instance_id,
                "X-Tenant-ID": project_id,
                "X-Instance-ID-Signature": sign_instance_id(self.secret, instance_id)}

    def _connection(self) -> http.client.HTTPConnection:
        if self.https:
            return http.client.HTTPSConnection(self.host, self.port, timeout=self.timeout,
                                               context=self._ssl)
        return http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)

    def forward(self, method: str, path: str, body: bytes | None, instance_id: str,
                project_id: str, forwarded_for: str) -> Answer:
        conn = self._connection()
        try:
            conn.request(method, path, body=body or None,
                         headers=self.headers(instance_id, project_id, forwarded_for))
            resp = conn.getresponse()
            content = resp.read()
        except (OSError, http.client.HTTPException, socket.timeout) as exc:
            LOG.warning("the compute metadata server is unavailable: %s", exc)
            return text_answer(503, "The remote metadata server is temporarily unavailable. "
                                    "Please try again later.")
        finally:
            conn.close()
        if resp.status == 403:
            LOG.warning("the compute metadata server answered 403: shared secrets differ?")
        if resp.status not in PASSED_ON:
            LOG.error("unexpected answer %d from the compute metadata server", resp.status)
            return text_answer(500, "An unknown error has occurred. "
                                    "Please try your request again.")
        headers = [(k, v) for k, v in resp.getheaders() if k.lower() not in HOP_BY_HOP]
        return Answer(resp.status, headers, content)
