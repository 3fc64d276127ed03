"""keepalived for HA routers: the configuration (pure) and one process per router.

An HA router lives on several hosts; VRRP over the ``ha-`` device elects
the master. keepalived then puts the router's addresses (the qr-/qg-
addresses and floating IPs, as "excluded" VIPs, not carried in the VRRP
adverts) and its routes in place on the master only, removes them on a
backup, and announces them with gratuitous ARPs. Those addresses and routes are
``no_track``, as upstream's (keepalived 2): one removed behind
keepalived's back does not put the instance in FAULT and fail the router
over; ``neutrino audit --repair`` puts it back. As upstream: every host
starts as BACKUP with the same priority and ``nopreempt``, so a recovered
host does not take the router back.

keepalived reports its transitions by running the notify script written
next to the configuration; the script records the state in a file that
the agent watches (``state_of``) and reports to the server.
"""
from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
from pathlib import Path

from neutrino.agents.l3.model import DesiredRouter
from neutrino.agents.pidfile import cmdline, pid_of, terminate

PRIORITY = 50
GARP_MASTER_DELAY = 60
# keepalived's states, as the server's ``ha_state`` shows them
STATES = {"MASTER": "active", "BACKUP": "standby", "FAULT": "standby", "STOP": "standby"}


@dataclasses.dataclass(frozen=True)
class Settings:
    """The agent's ``ha_vrrp_*`` options."""

    advert_int: int = 2
    auth_type: str = "PASS"
    auth_password: str | None = None


def _vips(router: DesiredRouter) -> list[str]:
    """Each qr-/qg- address (and floating IP) as ``address dev device no_track``."""
    out = []
    for dev in router.devices:
        if router.ha is not None and dev.name == router.ha.device:
            continue
        out += [f"{cidr} dev {dev.name} no_track" for cidr in sorted(router.addresses(dev.name))]
    return out


def _routes(router: DesiredRouter) -> list[str]:
    out = []
    for route in router.routes:
        dest = route.destination
        if dest == "default":
            dest = "0.0.0.0/0" if route.version == 4 else "::/0"
        line = f"{dest} via {route.nexthop}"
        if route.device:
            line += f" dev {route.device}"
        if route.onlink:
            line += " onlink"
        out.append(line + " no_track")
    return out


def config(router: DesiredRouter, settings: Settings, notify_script: str) -> str:
    """keepalived.conf of one HA router on one host."""
    ha = router.ha
    if ha is None:
        raise ValueError(f"router {router.router_id} is not HA on this host")
    lines = [
        "global_defs {",
        "    notification_email_from neutron@openstack.org",
        "    router_id neutron",
        "}",
        f"vrrp_instance VR_{ha.vr_id} {{",
        "    state BACKUP",
        f"    interface {ha.device}",
        f"    virtual_router_id {ha.vr_id}",
        f"    priority {PRIORITY}",
        f"    garp_master_delay {GARP_MASTER_DELAY}",
        "    nopreempt",
        f"    advert_int {settings.advert_int}",
    ]
    if settings.auth_password:
        lines += ["    authentication {", f"        auth_type {settings.auth_type}",
                  f"        auth_pass {settings.auth_password}", "    }"]
    lines += ["    track_interface {", f"        {ha.device}", "    }",
              "    virtual_ipaddress {", f"        {ha.primary_vip} dev {ha.device}", "    }"]
    vips = _vips(router)
    if vips:
        lines += ["    virtual_ipaddress_excluded {", *(f"        {v}" for v in vips), "    }"]
    routes = _routes(router)
    if routes:
        lines += ["    virtual_routes {", *(f"        {r}" for r in routes), "    }"]
    lines += [f'    notify "{notify_script}"', "}"]
    return "\n".join(lines) + "\n"


NOTIFY_SCRIPT = """#!/bin/sh
# keepalived runs this with: INSTANCE <name> <MASTER|BACKUP|FAULT|STOP> <priority>
printf '%s' "$3" > "{state}.new" && mv "{state}.new" "{state}"
"""


class Keepalived:
    """One router's keepalived in its namespace; files under ``<ha_confs_path>/<router>``."""

    def __init__(self, confs_path: str, router_id: str) -> None:
        self.dir = Path(confs_path) / router_id
        self.conf = self.dir / "keepalived.conf"
        self.state_file = self.dir / "state"
        self.pid_file = self.dir / "keepalived.pid"
        self.vrrp_pid_file = self.dir / "keepalived-vrrp.pid"
        self.notify_script = self.dir / "notify.sh"

    def pid(self) -> int | None:
        """The running keepalived's pid (None when it is not running; a pid
        reused by another process does not count)."""
        return pid_of(self.pid_file, str(self.conf))

    def ensure(self, router: DesiredRouter, settings: Settings) -> None:
        """Running with the current configuration: started, or reloaded on a change."""
        self.dir.mkdir(parents=True, exist_ok=True)
        if not self.notify_script.exists():
            self.notify_script.write_text(NOTIFY_SCRIPT.format(state=self.state_file))
            self.notify_script.chmod(0o755)
        text = config(router, settings, str(self.notify_script))
        changed = not self.conf.exists() or self.conf.read_text() != text
        if changed:
            self.conf.write_text(text)
        pid = self.pid()
        if pid is None:
            subprocess.run(["ip", "netns", "exec", router.namespace, "keepalived", "-P",
                            "-f", str(self.conf), "-p", str(self.pid_file),
                            "-r", str(self.vrrp_pid_file)], check=True, timeout=30,
                           capture_output=True)
        elif changed:
            os.kill(pid, signal.SIGHUP)

    def state(self) -> str | None:
        """``active``/``standby`` as keepalived last notified (None: not yet)."""
        try:
            return STATES.get(self.state_file.read_text().strip())
        except OSError:
            return None

    def stop(self) -> None:
        """Stopped (keepalived takes its addresses away) and its files removed."""
        pid = self.pid()
        if pid is not None:  # keepalived removes its addresses on the way out
            terminate(pid, lambda: cmdline(pid) is not None, 10, kill=False)
        for path in (self.conf, self.state_file, self.pid_file, self.vrrp_pid_file,
                     self.notify_script):
            path.unlink(missing_ok=True)
        try:
            self.dir.rmdir()
        except OSError:
            pass
