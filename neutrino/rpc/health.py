"""Whether the message bus answers, told cheaply enough for every
``/healthcheck``: a TCP connection to one of the transport URL's brokers.

API workers never load oslo.messaging (it costs each of them start-up time
and memory), so the URL is read here by hand; a broker that accepts the
connection counts as reachable.
"""
from __future__ import annotations

import socket
from urllib.parse import urlsplit

DEFAULT_PORTS = {"rabbit": 5672, "amqp": 5672, "kafka": 9092}


def brokers(url: str) -> list[tuple[str, int]]:
    """The host and port of each broker a transport URL names
    (``rabbit://user:pass@host1:5672,user:pass@host2:5672/vhost``)."""
    scheme, _, rest = url.partition("://")
    default = DEFAULT_PORTS.get(scheme.split("+")[0], 5672)
    netloc = rest.split("/", 1)[0]
    found = []
    for part in netloc.split(","):
        address = urlsplit(f"//{part.rsplit('@', 1)[-1]}")
        if address.hostname:
            found.append((address.hostname, address.port or default))
    return found


def unreachable(url: str, timeout: float) -> str | None:
    """None when a broker accepts a connection, else what each refused."""
    failures = []
    for host, port in brokers(url):
        try:
            with socket.create_connection((host, port), timeout=timeout):
                return None
        except OSError as exc:
            failures.append(f"{host}:{port}: {exc}")
    return "; ".join(failures) or "no broker in transport_url"
