#!/usr/bin/env python3
"""Benchmark client for any OpenStack Networking (Neutron) API v2.0 endpoint.

Measures create/list/show/update/delete for networks, subnets and ports at
several concurrency levels and reports throughput and latency percentiles.
The same script is pointed at neutrino and at upstream Neutron so that the
numbers in docs/performance.md are comparable: it relies only on the public
REST API and on the standard library (``http.client``), so it needs nothing
installed on the machine running it.

Safety: it only talks to loopback addresses, every request has a timeout, the
number of timed requests is bounded by ``--count``, and everything it created
is deleted at the end even when a phase fails.

Example::

    python benchmarks/api_bench.py --url http://127.0.0.1:9696 \\
        --concurrency 1 8 --count 200 --warmup 10 --list-size 1000 \\
        --json out.json --markdown

Against upstream Neutron whose tenant network type has only a few free
segments (e.g. a two-VLAN range), add ``--network-attr
provider:network_type=vxlan`` (or ``local``) so network creates don't fail
with 503 NoNetworkAvailable; the attribute is recorded in the JSON output.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.client
import ipaddress
import json
import signal
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

REQUEST_TIMEOUT_S = 30.0
# Untimed bulk creates of BULK_BATCH ports can take upstream Neutron well over
# 30 s on a loaded host (~0.3 s per port), so they get a longer, still finite,
# timeout. Every other request, timed or not, uses REQUEST_TIMEOUT_S.
BULK_TIMEOUT_S = 300.0
BULK_BATCH = 100
DEFAULT_PROJECT_ID = "b3c4b3c4000040008000be4c4be4c4b3"
DEFAULT_HEADERS = {
    "X-User-Id": "bench",
    "X-Project-Id": DEFAULT_PROJECT_ID,
    "X-Roles": "admin",
}
RESOURCES = ("network", "subnet", "port")
# "filter": a list by name matching one resource among many, the shape of
# a client looking a resource up by its name.
VERBS = ("create", "list", "filter", "show", "update", "delete")
ALL_OPS = tuple(f"{r}-{v}" for r in RESOURCES for v in VERBS)
# The port fixture subnet: a /16 so that list padding plus every port created
# by the timed phases fits (65k addresses) without exhausting the pool.
PORT_CIDR = "10.0.0.0/16"
# Subnet-create CIDRs are /24s carved from here, distinct from PORT_CIDR and
# from each other, so the run also works when overlapping IPs are disabled.
SUBNET_POOL = ipaddress.ip_network("10.128.0.0/9")
PORT_ADDRESSES = ipaddress.ip_network(PORT_CIDR).num_addresses - 16
SUBNET_SLOTS = SUBNET_POOL.num_addresses // 256
MAX_ERROR_SAMPLES = 5
FILTER_TARGETS = 5
CLEANUP_PASSES = 3


# --------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------


def normalize_op(name: str) -> str:
    """Accept both ``port-create`` and ``create-port``/``list-ports`` forms.

    Humans naturally write "list-ports"; the canonical key keeps the report
    grouped by resource.
    """
    parts = name.strip().lower().replace("_", "-").split("-")
    if len(parts) != 2:
        raise ValueError(f"bad op {name!r}")
    a, b = (p[:-1] if p.endswith("s") and p[:-1] in RESOURCES else p for p in parts)
    if a in RESOURCES and b in VERBS:
        return f"{a}-{b}"
    if b in RESOURCES and a in VERBS:
        return f"{b}-{a}"
    raise ValueError(f"unknown op {name!r}; known: {', '.join(ALL_OPS)}")


def parse_ops(text: str) -> list[str]:
    """Parse ``--ops`` and order the result so dependencies run first.

    Show/update/delete reuse what create made, and delete must come last so
    the other ops still have targets; the user's ordering is irrelevant.
    """
    names = [o.strip() for o in text.split(",") if o.strip()]
    if "all" in names:
        return list(ALL_OPS)
    wanted = {normalize_op(o) for o in names}
    if not wanted:
        raise ValueError("--ops selects nothing")
    return [op for op in ALL_OPS if op in wanted]


def parse_header(text: str) -> tuple[str, str]:
    """Parse ``'Name: value'`` as given to ``--header``."""
    name, sep, value = text.partition(":")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"header must be 'Name: value', got {text!r}")
    return name.strip(), value.strip()


def parse_attr(text: str) -> tuple[str, Any]:
    """Parse ``KEY=VALUE`` for ``--network-attr``; VALUE is JSON if it parses.

    Lets ``provider:segmentation_id=5`` be an int while
    ``provider:network_type=local`` stays a string.
    """
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        return key, json.loads(value)
    except ValueError:
        return key, value


def build_parser() -> argparse.ArgumentParser:
    """Define the CLI; defaults match the numbers in docs/performance.md."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--url", default="http://127.0.0.1:9696",
                   help="endpoint root (loopback only), e.g. http://127.0.0.1:9696")
    p.add_argument("--concurrency", type=int, action="extend", nargs="+", metavar="C",
                   help="worker thread counts, e.g. '--concurrency 1 8 32' (default: 1 8)")
    p.add_argument("--count", type=int, default=200, metavar="N",
                   help="requests per (op, concurrency) (default: 200)")
    p.add_argument("--warmup", type=int, default=10, metavar="W",
                   help="untimed requests of each (op, concurrency) before its timed "
                        "ones (default: 10): the first requests a server process "
                        "answers pay once for what then stays cached (statement "
                        "compilation, first connections), which is start-up's cost, "
                        "not the operation's")
    p.add_argument("--list-size", type=int, default=1000,
                   help="minimum ports present while port-list is timed (default: 1000)")
    p.add_argument("--ops", default="all",
                   help=f"comma-separated ops or 'all' (default). Known: {','.join(ALL_OPS)}")
    p.add_argument("--header", type=parse_header, action="append", default=[],
                   metavar="'Name: value'", help="extra/override request header; repeatable")
    p.add_argument("--network-attr", type=parse_attr, action="append", default=[],
                   metavar="KEY=VALUE",
                   help="extra attribute for every network created, e.g. "
                        "provider:network_type=local when the server's tenant "
                        "network ranges are too small for the run; repeatable")
    p.add_argument("--server-pid", type=int, metavar="PID",
                   help="also report the CPU per request of this process and every "
                        "process below it (read from /proc before and after each row)")
    p.add_argument("--json", metavar="FILE", help="also write results as JSON")
    p.add_argument("--markdown", action="store_true",
                   help="also print a Markdown table (for docs/performance.md)")
    return p


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Parse and validate arguments, failing early with a clear message."""
    parser = build_parser()
    args = parser.parse_args(argv)
    args.concurrency = args.concurrency or [1, 8]
    if (any(c < 1 for c in args.concurrency) or args.count < 1 or args.list_size < 0
            or args.warmup < 0):
        parser.error("--concurrency and --count must be >= 1, --list-size and --warmup >= 0")
    # Each concurrency level may create up to 2(N + W) of a kind (creates plus
    # untimed delete targets); keep that inside the address/CIDR pools.
    per_kind = 2 * (args.count + args.warmup) * len(args.concurrency)
    if args.list_size + per_kind > PORT_ADDRESSES or per_kind > SUBNET_SLOTS:
        parser.error("--count/--list-size too large for the fixture address pools")
    try:
        args.ops = parse_ops(args.ops)
    except ValueError as exc:
        parser.error(str(exc))
    try:
        args.target = check_loopback_url(args.url)
    except ValueError as exc:
        parser.error(str(exc))
    headers = dict(DEFAULT_HEADERS)
    for name, value in args.header:
        for existing in [k for k in headers if k.lower() == name.lower()]:
            del headers[existing]
        headers[name] = value
    args.headers = headers
    args.project_id = next((v for k, v in headers.items()
                            if k.lower() == "x-project-id"), DEFAULT_PROJECT_ID)
    return args


@dataclass(frozen=True)
class Target:
    """Where to connect: parsed once so workers don't re-parse the URL."""

    scheme: str
    host: str
    port: int
    base_path: str


def check_loopback_url(url: str) -> Target:
    """Refuse anything but loopback so the benchmark can't load a real cloud."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"--url must be http(s)://host[:port], got {url!r}")
    host = parts.hostname
    if host != "localhost":
        try:
            if not ipaddress.ip_address(host).is_loopback:
                raise ValueError
        except ValueError:
            raise ValueError(
                f"refusing to benchmark {host!r}: only loopback targets "
                "(127.0.0.0/8, localhost, ::1) are allowed") from None
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return Target(parts.scheme, host, port, parts.path.rstrip("/"))


# --------------------------------------------------------------------------
# HTTP
# --------------------------------------------------------------------------


@dataclass
class Response:
    """One request's outcome; status 0 means a transport-level failure.

    The body is kept raw and decoded when first asked for: decoding a page
    of 1,000 ports takes the client tens of milliseconds, which with one
    client would count against the server's throughput although the timed
    latency ends when the body is read.
    """

    status: int
    raw: bytes | None
    latency_s: float
    error: str = ""

    @functools.cached_property
    def body(self) -> Any:
        return decode_json(self.raw)

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


class Client:
    """A keep-alive connection owned by a single thread.

    One connection per worker mirrors how real clients (neutronclient,
    openstacksdk via requests.Session) talk to the API, and keeps TCP
    handshakes out of the measured latency.
    """

    def __init__(self, target: Target, headers: dict[str, str],
                 timeout: float = REQUEST_TIMEOUT_S) -> None:
        self.target = target
        self.timeout = timeout
        self.headers = {"Accept": "application/json", **headers}
        self.conn = self._connect()

    def _connect(self) -> http.client.HTTPConnection:
        cls = (http.client.HTTPSConnection if self.target.scheme == "https"
               else http.client.HTTPConnection)
        return cls(self.target.host, self.target.port, timeout=self.timeout)

    def request(self, method: str, path: str, body: Any = None) -> Response:
        """Send one request and time it end to end (send + full body read)."""
        headers = dict(self.headers)
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        start = time.perf_counter()
        for attempt in (1, 2):
            try:
                self.conn.request(method, self.target.base_path + path, data, headers)
                resp = self.conn.getresponse()
                raw = resp.read()
                break
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as exc:
                # The server closed an idle keep-alive connection just as we
                # reused it: nothing was processed, so reconnect and resend once.
                self.conn.close()
                if attempt == 2:
                    return Response(0, None, time.perf_counter() - start, repr(exc))
                start = time.perf_counter()
            except (OSError, http.client.HTTPException) as exc:
                # Drop the broken socket; http.client reconnects on next use.
                self.conn.close()
                return Response(0, None, time.perf_counter() - start, repr(exc))
        latency = time.perf_counter() - start
        return Response(resp.status, raw, latency,
                        "" if 200 <= resp.status < 300 else raw[:300].decode("utf-8", "replace"))

    def close(self) -> None:
        self.conn.close()


def decode_json(raw: bytes) -> Any:
    """Decode a body if it is JSON; error pages may be HTML or empty."""
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return None


class ApiError(RuntimeError):
    """Raised when an untimed setup/cleanup call fails; aborts the phase."""


# --------------------------------------------------------------------------
# Timed execution
# --------------------------------------------------------------------------


@dataclass
class Call:
    """A request to be issued by a worker: method, path and optional body."""

    method: str
    path: str
    body: Any = None


@dataclass
class Result:
    """Aggregated numbers for one (op, concurrency) cell of the report."""

    op: str
    concurrency: int
    requests: int
    errors: int
    wall_s: float
    ops_per_s: float
    p50_ms: float
    p90_ms: float
    p99_ms: float
    max_ms: float
    list_items: int | None = None
    # The server's CPU (its process tree's, all threads) over the timed
    # requests, divided by their number; None when no server was named.
    server_cpu_ms: float | None = None
    error_samples: list[str] = field(default_factory=list)


def percentile(sorted_values: list[float], pct: float) -> float:
    """Linear-interpolated percentile (same as numpy's default)."""
    if not sorted_values:
        return float("nan")
    rank = (len(sorted_values) - 1) * pct / 100.0
    lo = int(rank)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (rank - lo)


def run_calls(target: Target, headers: dict[str, str], calls: list[Call],
              concurrency: int) -> tuple[list[Response], float]:
    """Issue ``calls`` from ``concurrency`` threads; return responses in order.

    Workers pull from a shared index so a slow request on one thread doesn't
    leave others idle. Connections are opened before the start barrier so
    the wall clock covers only request traffic.
    """
    responses: list[Response | None] = [None] * len(calls)
    next_index = iter(range(len(calls)))
    lock = threading.Lock()
    workers = max(1, min(concurrency, len(calls)))
    barrier = threading.Barrier(workers + 1)
    stop = threading.Event()

    def worker() -> None:
        client = Client(target, headers)
        with contextlib.suppress(OSError):  # first request retries, records it
            client.conn.connect()
        barrier.wait()
        try:
            while True:
                with lock:
                    i = None if stop.is_set() else next(next_index, None)
                if i is None:
                    return
                c = calls[i]
                responses[i] = client.request(c.method, c.path, c.body)
        finally:
            client.close()

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(workers)]
    for t in threads:
        t.start()
    barrier.wait()
    start = time.perf_counter()
    try:
        for t in threads:
            # Timed joins: a signal delivered to a worker thread only runs its
            # Python handler once the main thread wakes up, so wake up often.
            while t.is_alive():
                t.join(0.1)
    except BaseException:
        # Interrupted: let in-flight requests finish (bounded by the request
        # timeout) so nothing is still creating objects while cleanup runs.
        stop.set()
        for t in threads:
            t.join()
        raise
    wall = time.perf_counter() - start
    return [r or Response(0, None, 0.0, "not executed") for r in responses], wall


def summarize(op: str, concurrency: int, responses: list[Response], wall_s: float) -> Result:
    """Turn raw responses into one report row."""
    lat = sorted(r.latency_s * 1000.0 for r in responses)
    failed = [r for r in responses if not r.ok]
    samples = [f"{r.status}: {r.error}" for r in failed[:MAX_ERROR_SAMPLES]]
    items = None
    if op.endswith(("-list", "-filter")) and responses and isinstance(responses[-1].body, dict):
        plural = op.split("-")[0] + "s"
        items = len(responses[-1].body.get(plural) or [])
    return Result(op, concurrency, len(responses), len(failed), wall_s,
                  len(responses) / wall_s if wall_s > 0 else 0.0,
                  percentile(lat, 50), percentile(lat, 90), percentile(lat, 99),
                  lat[-1] if lat else float("nan"), items, error_samples=samples)


# --------------------------------------------------------------------------
# Resource bookkeeping, setup and cleanup
# --------------------------------------------------------------------------


class Bench:
    """Holds the run's state: fixtures, reusable targets and created IDs.

    Everything created is recorded in ``created`` before anything else can
    fail, so ``cleanup`` can always find it.
    """

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.run_tag = f"bench-{uuid.uuid4().hex[:8]}"
        self.client = Client(args.target, args.headers)
        self.bulk_client = Client(args.target, args.headers, BULK_TIMEOUT_S)
        self.created: dict[str, set[str]] = {r: set() for r in RESOURCES}
        # IDs that timed show/update/delete ops may target, per resource.
        self.pool: dict[str, list[str]] = {r: [] for r in RESOURCES}
        self.port_network: str | None = None
        self.cidr_counter = 0
        self.name_counter = 0
        self.saved_quota: dict[str, int] = {}

    # ---- naming -----------------------------------------------------------

    def name(self, kind: str) -> str:
        """Unique, recognisable names so leftovers can be swept by prefix."""
        self.name_counter += 1
        return f"{self.run_tag}-{kind}-{self.name_counter}"

    def next_cidr(self) -> str:
        """Hand out the next unused /24 from SUBNET_POOL."""
        net = SUBNET_POOL.network_address + (self.cidr_counter << 8)
        self.cidr_counter += 1
        if net not in SUBNET_POOL:
            raise ApiError("ran out of /24s for subnet-create; lower --count")
        return f"{net}/24"

    # ---- request bodies ---------------------------------------------------
    # project_id is sent explicitly because upstream Neutron in noauth mode
    # gives requests an admin context without a project and then rejects
    # creates that don't name one. It equals X-Project-Id, so it is a no-op
    # for servers that derive it from the headers.

    def network_body(self) -> dict[str, Any]:
        return {"name": self.name("net"), "project_id": self.args.project_id,
                **dict(self.args.network_attr)}

    def subnet_body(self, network_id: str, cidr: str) -> dict[str, Any]:
        # DHCP off: no agent-side DHCP port is created, so results don't depend
        # on agents being present and networks stay deletable without waiting.
        return {"name": self.name("subnet"), "network_id": network_id,
                "ip_version": 4, "cidr": cidr, "enable_dhcp": False,
                "project_id": self.args.project_id}

    def port_body(self) -> dict[str, Any]:
        return {"name": self.name("port"), "network_id": self.port_network,
                "project_id": self.args.project_id}

    # ---- untimed helpers --------------------------------------------------

    def call(self, method: str, path: str, body: Any = None,
             ok: Iterable[int] = (200, 201, 204), bulk: bool = False) -> Response:
        """Untimed request that must succeed (setup correctness matters)."""
        client = self.bulk_client if bulk else self.client
        resp = client.request(method, path, body)
        if resp.status not in ok:
            raise ApiError(f"{method} {path} -> {resp.status}: {resp.error}")
        return resp

    def record(self, resource: str, resp: Response, into_pool: bool) -> list[str]:
        """Remember IDs from a create response (single or bulk)."""
        body = resp.body if isinstance(resp.body, dict) else {}
        items = body.get(resource + "s") or ([body[resource]] if resource in body else [])
        ids = [it["id"] for it in items if isinstance(it, dict) and "id" in it]
        self.created[resource].update(ids)
        if into_pool:
            self.pool[resource].extend(ids)
        return ids

    def bulk_create(self, resource: str, bodies: list[dict[str, Any]],
                    into_pool: bool) -> list[str]:
        """Create untimed, in batches of BULK_BATCH, via the bulk API."""
        ids: list[str] = []
        for i in range(0, len(bodies), BULK_BATCH):
            batch = bodies[i:i + BULK_BATCH]
            resp = self.call("POST", f"/v2.0/{resource}s", {f"{resource}s": batch},
                             ok=(201,), bulk=True)
            ids += self.record(resource, resp, into_pool)
        return ids

    def bump_quota(self) -> None:
        """Lift quotas for the bench project if needed (best effort).

        Upstream's default quotas (100 networks, 100 subnets, 500 ports) are
        below what a default run creates. The previous values are kept so
        cleanup can put them back; servers without quotas just 404.
        """
        path = f"/v2.0/quotas/{self.args.project_id}"
        resp = self.client.request("GET", path)
        current = (resp.body or {}).get("quota") if resp.ok else None
        if not isinstance(current, dict):
            log(f"note: no quota API ({resp.status}); continuing")
            return
        keys = ("network", "subnet", "port")
        if all(current.get(k) == -1 for k in keys):
            return
        resp = self.client.request("PUT", path, {"quota": {k: -1 for k in keys}})
        if resp.ok:
            self.saved_quota = {k: current[k] for k in keys if k in current}
        else:
            log(f"note: could not lift quotas ({resp.status}); continuing")

    def restore_quota(self) -> None:
        """Put back the quota values ``bump_quota`` replaced."""
        if self.saved_quota:
            self.client.request("PUT", f"/v2.0/quotas/{self.args.project_id}",
                                {"quota": self.saved_quota})

    def setup(self) -> None:
        """Create the network+/16 subnet that ports are allocated from."""
        self.call("GET", "/v2.0/networks?limit=1", ok=(200,))
        self.bump_quota()
        resp = self.call("POST", "/v2.0/networks",
                         {"network": {**self.network_body(), "name": self.name("portnet")}},
                         ok=(201,))
        self.port_network = self.record("network", resp, into_pool=False)[0]
        resp = self.call("POST", "/v2.0/subnets",
                         {"subnet": self.subnet_body(self.port_network, PORT_CIDR)}, ok=(201,))
        self.record("subnet", resp, into_pool=False)

    def ensure_pool(self, resource: str, needed: int) -> None:
        """Top the target pool up to ``needed`` IDs (untimed bulk create)."""
        missing = needed - len(self.pool[resource])
        if missing <= 0:
            return
        if resource == "network":
            self.bulk_create("network", [self.network_body() for _ in range(missing)], True)
        elif resource == "port":
            self.bulk_create("port", [self.port_body() for _ in range(missing)], True)
        else:
            nets = self.bulk_create("network",
                                    [self.network_body() for _ in range(missing)], False)
            self.bulk_create("subnet", [self.subnet_body(n, self.next_cidr()) for n in nets], True)

    def count_ports(self) -> int:
        """Ports visible to a plain list, i.e. what port-list will return."""
        resp = self.call("GET", "/v2.0/ports?fields=id", ok=(200,))
        return len((resp.body or {}).get("ports") or [])

    def cleanup(self) -> None:
        """Delete everything this run created: ports, then subnets, networks.

        Order matters because Neutron refuses to delete a network or subnet
        that still has ports (409 InUse). A final sweep by name prefix catches
        objects whose create response was lost (e.g. a client timeout); it is
        repeated because such a create may still be finishing server-side.
        """
        for _ in range(CLEANUP_PASSES):
            self.sweep_leftovers()
            for resource in ("port", "subnet", "network"):
                self.delete_all(resource)
            if not any(self.created.values()):
                break
        left = {r: len(ids) for r, ids in self.created.items() if ids}
        if left:
            log(f"WARNING: cleanup could not delete {left}: {self.created}")
        self.restore_quota()
        self.client.close()
        self.bulk_client.close()

    def delete_all(self, resource: str) -> None:
        """Delete every recorded ``resource`` in parallel; 404 counts as gone."""
        calls = [Call("DELETE", f"/v2.0/{resource}s/{rid}")
                 for rid in sorted(self.created[resource])]
        responses, _ = run_calls(self.args.target, self.args.headers, calls,
                                 max(self.args.concurrency))
        for c, r in zip(calls, responses, strict=True):
            if r.ok or r.status == 404:
                self.created[resource].discard(c.path.rsplit("/", 1)[1])

    def sweep_leftovers(self) -> None:
        """Add objects named with this run's tag to ``created`` (best effort)."""
        for resource in RESOURCES:
            resp = self.client.request(
                "GET", f"/v2.0/{resource}s?fields=id&fields=name"
                       f"&project_id={self.args.project_id}")
            items = (resp.body or {}).get(resource + "s") if resp.ok else None
            for it in items or []:
                if str(it.get("name", "")).startswith(self.run_tag):
                    self.created[resource].add(it["id"])

    # ---- per-op preparation ----------------------------------------------

    def calls_for(self, op: str, n: int) -> list[Call]:
        """Build the N requests for an op, creating untimed targets as needed."""
        resource, verb = op.split("-")
        coll = f"/v2.0/{resource}s"
        if verb == "create":
            return self.create_calls(resource, n)
        if verb == "list":
            if resource == "port":
                self.pad_ports()
            return [Call("GET", coll)] * n
        if verb == "filter":
            return self.filter_calls(resource, n)
        if verb == "delete":
            self.ensure_pool(resource, n)
            ids, self.pool[resource] = self.pool[resource][-n:], self.pool[resource][:-n]
            return [Call("DELETE", f"{coll}/{i}") for i in ids]
        self.ensure_pool(resource, min(n, BULK_BATCH))
        ids = self.pool[resource]
        if verb == "show":
            return [Call("GET", f"{coll}/{ids[k % len(ids)]}") for k in range(n)]
        return [Call("PUT", f"{coll}/{ids[k % len(ids)]}",
                     {resource: {"name": self.name(f"{resource}-upd")}}) for k in range(n)]

    def filter_calls(self, resource: str, n: int) -> list[Call]:
        """Lists by the name of one resource of the pool (a few, in turn).

        The names are read untimed: an earlier update row renamed them.
        """
        self.ensure_pool(resource, min(n, BULK_BATCH))
        coll = f"/v2.0/{resource}s"
        names = [self.call("GET", f"{coll}/{rid}", ok=(200,)).body[resource]["name"]
                 for rid in self.pool[resource][:FILTER_TARGETS]]
        return [Call("GET", f"{coll}?name={quote(names[k % len(names)])}") for k in range(n)]

    def create_calls(self, resource: str, n: int) -> list[Call]:
        """Single-object creates; subnets each get their own network + /24."""
        coll = f"/v2.0/{resource}s"
        if resource == "network":
            return [Call("POST", coll, {"network": self.network_body()}) for _ in range(n)]
        if resource == "port":
            return [Call("POST", coll, {"port": self.port_body()}) for _ in range(n)]
        hosts = self.bulk_create("network", [self.network_body() for _ in range(n)], False)
        return [Call("POST", coll, {"subnet": self.subnet_body(h, self.next_cidr())})
                for h in hosts]

    def pad_ports(self) -> None:
        """Make sure port-list sees at least --list-size ports."""
        missing = self.args.list_size - self.count_ports()
        if missing > 0:
            self.bulk_create("port", [self.port_body() for _ in range(missing)], False)

    def after(self, op: str, calls: list[Call], responses: list[Response]) -> None:
        """Book-keep what a timed op created or deleted."""
        resource, verb = op.split("-")
        if verb == "create":
            for r in responses:
                if r.ok:
                    self.record(resource, r, into_pool=True)
        elif verb == "delete":
            for c, r in zip(calls, responses, strict=True):
                if r.ok:
                    self.created[resource].discard(c.path.rsplit("/", 1)[1])


# --------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------

COLUMNS = ("op", "conc", "reqs", "errors", "ops/s", "p50 ms", "p90 ms", "p99 ms",
           "max ms", "list items", "CPU ms/req")


def row_cells(r: Result) -> list[str]:
    """Format one result row; shared by the text and Markdown tables."""
    return [r.op, str(r.concurrency), str(r.requests), str(r.errors),
            f"{r.ops_per_s:.1f}", f"{r.p50_ms:.2f}", f"{r.p90_ms:.2f}",
            f"{r.p99_ms:.2f}", f"{r.max_ms:.2f}",
            "" if r.list_items is None else str(r.list_items),
            "" if r.server_cpu_ms is None else f"{r.server_cpu_ms:.2f}"]


def text_table(results: list[Result]) -> str:
    """Fixed-width table for humans reading the terminal."""
    rows = [list(COLUMNS)] + [row_cells(r) for r in results]
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                       for i, (c, w) in enumerate(zip(row, widths, strict=True))) for row in rows]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


def markdown_table(results: list[Result]) -> str:
    """GitHub-flavoured table for pasting into docs/performance.md."""
    lines = ["| " + " | ".join(COLUMNS) + " |",
             "|" + "|".join(["---"] + ["---:"] * (len(COLUMNS) - 1)) + "|"]
    lines += ["| " + " | ".join(row_cells(r)) + " |" for r in results]
    return "\n".join(lines)


def write_json(path: str, args: argparse.Namespace, results: list[Result]) -> None:
    """Machine-readable results plus the parameters needed to reproduce them."""
    doc = {
        "url": args.url,
        "count": args.count,
        "warmup": args.warmup,
        "concurrency": args.concurrency,
        "list_size": args.list_size,
        "ops": args.ops,
        "network_attr": dict(args.network_attr),
        "started_at": args.started_at,
        "results": [asdict(r) for r in results],
    }
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=2)
        fh.write("\n")


def log(msg: str) -> None:
    """Progress goes to stderr so stdout stays a clean table."""
    print(msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------


def run_op(bench: Bench, op: str, concurrency: int,
           cpu: Callable[[], float] | None = None) -> Result:
    """Warm up, prepare, time and book-keep one (op, concurrency) cell.

    ``cpu`` reads the server's CPU seconds so far; it is read just before
    and just after the timed requests.
    """
    if bench.args.warmup:
        calls = bench.calls_for(op, bench.args.warmup)
        bench.after(op, calls, run_calls(bench.args.target, bench.args.headers, calls,
                                         concurrency)[0])
    calls = bench.calls_for(op, bench.args.count)
    cpu_before = cpu() if cpu else 0.0
    responses, wall = run_calls(bench.args.target, bench.args.headers, calls, concurrency)
    cpu_spent = cpu() - cpu_before if cpu else None
    bench.after(op, calls, responses)
    result = summarize(op, concurrency, responses, wall)
    if cpu_spent is not None:
        result.server_cpu_ms = 1000 * cpu_spent / len(calls)
    log(f"  {op:<15} c={concurrency:<3} {result.ops_per_s:8.1f} ops/s  "
        f"p50={result.p50_ms:.2f}ms  errors={result.errors}"
        + ("" if cpu_spent is None else f"  cpu={result.server_cpu_ms:.2f}ms/req"))
    for sample in result.error_samples:
        log(f"    error {sample}")
    return result


def run(args: argparse.Namespace, on_result: Callable[[Result], None]) -> None:
    """Run every op at every concurrency, always cleaning up afterwards."""
    bench = Bench(args)
    cpu = None
    if args.server_pid:
        from proc_cpu import tree_cpu_seconds
        cpu = functools.partial(tree_cpu_seconds, args.server_pid)
    try:
        log(f"setup ({bench.run_tag}) against {args.url}")
        bench.setup()
        for concurrency in args.concurrency:
            log(f"concurrency {concurrency}:")
            for op in args.ops:
                on_result(run_op(bench, op, concurrency, cpu))
    finally:
        log("cleanup")
        bench.cleanup()


def interrupt_on_sigterm() -> None:
    """Treat SIGTERM like Ctrl-C so ``finally`` blocks (cleanup) still run."""
    def handler(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, handler)


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns non-zero if setup failed or any request errored."""
    args = parse_args(argv)
    interrupt_on_sigterm()
    args.started_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    results: list[Result] = []
    status = 0
    try:
        run(args, results.append)
    except ApiError as exc:
        log(f"error: {exc}")
        status = 2
    except KeyboardInterrupt:
        log("interrupted")
        status = 130
    except Exception:  # still print whatever was measured
        log(traceback.format_exc())
        status = 2
    if results:
        print(text_table(results))
        if args.markdown:
            print()
            print(markdown_table(results))
        if args.json:
            write_json(args.json, args, results)
    if status == 0 and any(r.errors for r in results):
        status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
