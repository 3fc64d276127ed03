"""The ``neutrino`` command: ``serve``, ``db upgrade``, ``db current``, ``db import``,
``agent <kind>``, ``trace`` (a client of the API: no configuration file),
``audit [--repair]``."""
from __future__ import annotations

import argparse
import sys

from oslo_config import cfg

from neutrino.cmd.logs import quiet_foreign_banners, setup_logging
from neutrino.conf.options import database_url
from neutrino.db import migrate
from neutrino.service import make_conf

# Each command's module is imported when that command runs: what the
# server imports is in every API worker forked from it (issue 37 caps a
# worker's memory), and the agents', the audit's, the tracer's and the
# upstream importer's modules were about 1.4 MB of it.


def _parse(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    parser = argparse.ArgumentParser(prog="neutrino")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("serve", help="run the API server", add_help=False)
    sub.add_parser("audit", help="differences between the database and what agents report",
                   add_help=False)
    sub.add_parser("trace", help="the path of one packet and what decides it (asks the API)",
                   add_help=False)
    db = sub.add_parser("db", help="database schema management")
    db.add_argument("action", choices=["upgrade", "current", "import"])
    db.add_argument("--from", dest="source", metavar="URL",
                    help="import: the upstream Neutron database to read (never written)")
    db.add_argument("--skip-unsupported", action="store_true",
                    help="import: leave behind what neutrino cannot carry instead of refusing")
    agent = sub.add_parser("agent", help="run an agent of this host", add_help=False)
    agent.add_argument("kind", choices=["bgp", "dhcp", "l3", "linuxbridge", "loadbalancer",
                                        "metadata", "metering", "ovs"])
    return parser.parse_known_args(argv)


def _conf(rest: list[str]) -> cfg.ConfigOpts:
    try:
        return make_conf(rest)
    except (cfg.Error, ValueError) as exc:
        _die(exc)
        raise


def _die(exc: BaseException) -> None:
    print(f"neutrino: configuration error: {exc}", file=sys.stderr)
    sys.exit(2)


def _import(args: argparse.Namespace, target: str) -> None:
    from neutrino.db.upstream import importer
    if not args.source:
        print("neutrino: db import needs --from <upstream Neutron database URL>", file=sys.stderr)
        sys.exit(2)
    try:
        report = importer.run(args.source, target, skip_unsupported=args.skip_unsupported)
    except importer.ImportRefused as exc:
        print(f"neutrino: import refused: {exc}", file=sys.stderr)
        sys.exit(1)
    for line in report.skipped:
        print(f"left behind: {line}")
    copied = {name: n for name, n in report.copied.items() if n}
    print(f"imported {sum(copied.values())} rows into {len(copied)} tables; "
          f"database at {migrate.describe(migrate.current(target))}")


def main(argv: list[str] | None = None) -> None:
    quiet_foreign_banners()
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["trace"]:
        from neutrino.cmd import trace
        sys.exit(trace.main(argv[1:]))
    if argv[:1] == ["audit"]:
        from neutrino.cmd import audit
        sys.exit(audit.main(argv[1:]))
    args, rest = _parse(argv)
    conf = _conf(rest)
    setup_logging(conf)
    if args.command == "db":
        if args.action == "import":
            _import(args, database_url(conf))
        elif args.action == "upgrade":
            migrate.upgrade(database_url(conf))
            print(f"database at {migrate.describe(migrate.current(database_url(conf)))}")
        else:
            print(migrate.describe(migrate.current(database_url(conf))))
        return
    if args.command == "agent":
        from neutrino.cmd import agents
        try:
            agents.run(args.kind, conf)
        except (ValueError, cfg.Error) as exc:
            _die(exc)
        return
    from neutrino.cmd import serve
    try:
        serve.run(conf)
    except serve.StartupError as exc:
        _die(exc)


if __name__ == "__main__":
    main()
