"""``neutrino trace``: asks a server's ``POST /v2.0/trace`` and prints the path.

A client of the API like any other (a Keystone token from ``--os-token`` or
``OS_TOKEN``; none with ``auth_strategy = noauth``), so it needs no
configuration file and no database. The exit status is the verdict's:
0 allowed, 1 denied or unreachable, 2 when the server refused the question.
With ``--live`` the hosts on the path run the packet too: each hop shows
the model's verdict and the host's, the disagreements are listed, and the
exit status is 3 when the hosts disagree with the model.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.request
from typing import Any

EXIT = {"allowed": 0, "denied": 1, "unreachable": 1}


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="neutrino trace",
                                description="the path of one packet and what decides it")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--port", dest="port_id", help="the source port's id")
    source.add_argument("--from", dest="source_ip",
                        help="an address outside the cloud, or a floating IP")
    p.add_argument("--source-ip", dest="port_source_ip",
                   help="with --port: the address it sends from (default its fixed IP)")
    p.add_argument("--to", dest="destination_ip", required=True, help="destination address")
    p.add_argument("--protocol", default="icmp", help="icmp (default), tcp, udp, sctp")
    p.add_argument("--dport", dest="destination_port", type=int,
                   help="destination port (tcp, udp, sctp)")
    p.add_argument("--url", default=os.environ.get("NEUTRINO_URL", "http://127.0.0.1:9696"),
                   help="the server's API (default $NEUTRINO_URL or http://127.0.0.1:9696)")
    p.add_argument("--os-token", default=os.environ.get("OS_TOKEN"),
                   help="a Keystone token (default $OS_TOKEN)")
    p.add_argument("--live", action="store_true",
                   help="also run the packet through the hosts' switches and routers")
    p.add_argument("--json", action="store_true", help="print the server's answer as is")
    return p


def request_body(args: argparse.Namespace) -> dict[str, Any]:
    packet = {"port_id": args.port_id,
              "source_ip": args.source_ip or args.port_source_ip,
              "destination_ip": args.destination_ip, "protocol": args.protocol,
              "destination_port": args.destination_port, "live": True if args.live else None}
    return {"trace": {k: v for k, v in packet.items() if v is not None}}


def ask(url: str, token: str | None, body: dict[str, Any]) -> tuple[int, Any]:
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if token:
        headers["X-Auth-Token"] = token
    req = urllib.request.Request(url.rstrip("/") + "/v2.0/trace", method="POST",
                                 data=json.dumps(body).encode(), headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        raw = exc.read()
        try:
            return exc.code, json.loads(raw)
        except ValueError:
            return exc.code, raw.decode(errors="replace")


def render(trace: dict[str, Any]) -> str:
    lines = [f"{n:>2}. {hop['kind']:<22} {hop['detail']}"
             for n, hop in enumerate(trace["hops"], 1)]
    lines.append(f"verdict: {trace['verdict']} ({trace['reason']})")
    return "\n".join(lines)


def render_live(trace: dict[str, Any]) -> str:
    """Each hop with the model's verdict and the host's, then the disagreements,
    each under the host that disagrees."""
    live = trace["live"]
    lines = []
    for n, hop in enumerate(live["hops"], 1):
        lines.append(f"{n:>2}. {hop['kind']:<22} {hop['detail']}")
        host = hop.get("live")
        lines.append(f"    model: {hop['model']:<11} host: "
                     + (f"{host['verdict']} ({host['detail']})" if host else "not asked"))
    lines.append(f"verdict: model {trace['verdict']} ({trace['reason']}), "
                 f"hosts {live['verdict']}")
    by_host = live.get("by_host")  # a server of before it grouped them gives only the list
    if by_host is None:
        lines += [f"DISAGREES: {line}" for line in live["disagreements"]]
    else:
        lines += [f"DISAGREES ({host}): {line}" for host, found in by_host.items()
                  for line in found]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    try:
        status, answer = ask(args.url, args.os_token, request_body(args))
    except (urllib.error.URLError, OSError) as exc:
        print(f"neutrino trace: cannot reach {args.url}: {exc}", file=sys.stderr)
        return 2
    if status != 200:
        error = answer.get("NeutronError", {}) if isinstance(answer, dict) else {}
        print(f"neutrino trace: {status} {error.get('message', answer)}", file=sys.stderr)
        return 2
    trace = answer["trace"]
    if args.json:
        print(json.dumps(answer, indent=1))
    else:
        print(render_live(trace) if "live" in trace else render(trace))
    if "live" in trace and not trace["live"]["agrees"]:
        return 3
    return EXIT.get(trace["verdict"], 1)
