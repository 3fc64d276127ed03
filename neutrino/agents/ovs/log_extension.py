"""The OVS agent's ``log`` extension: which logs cover its ports, and the
packet-in reader that writes their lines.

The server pushes a log that was made, enabled or disabled, or deleted
(``neutron-vo-Log-1.0``); the push only queues it for the next pass, which
asks the server which ports the queued logs cover
(``get_sg_log_info_for_log_resources``) and, for each port it (re)wires,
which logs cover that port (``get_sg_log_info_for_port``). The answers
fold into what the agent knows (``netlog``); the plan turns that into log
flows. A failed call leaves its work queued for the next pass.
"""
from __future__ import annotations

import logging
import threading
from typing import Any, Iterable

from neutrino.agents.ovs import netlog, packet_log

LOG = logging.getLogger(__name__)


class LogExtension:
    def __init__(self, rpc: Any, reader: packet_log.PacketLogReader | None = None) -> None:
        self.rpc = rpc
        self.reader = reader
        self._lock = threading.Lock()
        self._changed: dict[str, dict[str, Any]] = {}  # log id -> the log pushed
        self._deleted: set[str] = set()
        self._ports: set[str] = set()  # ports whose logs failed to be read

    # -- the push (an RPC thread) ---------------------------------------------------

    def pushed(self, logs: list[dict[str, Any]], event_type: str) -> None:
        with self._lock:
            for log in logs:
                if event_type == "deleted" or not log.get("enabled", True):
                    self._changed.pop(log["id"], None)
                    self._deleted.add(log["id"])
                else:
                    self._deleted.discard(log["id"])
                    self._changed[log["id"]] = log

    def forget(self) -> None:
        """A full resync asks about every port again; queued pushes stay."""
        with self._lock:
            self._ports.clear()

    # -- the pass ---------------------------------------------------------------------

    def read(self, logs: dict[str, netlog.LogInfo], ports: Iterable[str]
             ) -> dict[str, netlog.LogInfo] | None:
        """The logs once the queued pushes and ``ports`` are asked about;
        None when there was nothing to ask."""
        with self._lock:
            changed, deleted = dict(self._changed), set(self._deleted)
            self._changed.clear()
            self._deleted.clear()
            ports = set(ports) | self._ports
            self._ports.clear()
        if not (changed or deleted or ports):
            return None
        out = netlog.without(logs, deleted)
        if changed:
            try:
                answer = self.rpc.get_sg_log_info_for_log_resources(list(changed.values()))
                out = netlog.with_log_answer(out, changed, answer)
            except Exception:  # noqa: BLE001 - asked again next pass
                LOG.exception("get_sg_log_info_for_log_resources failed")
                with self._lock:
                    for log_id, log in changed.items():
                        self._changed.setdefault(log_id, log)
        for port in sorted(ports):
            try:
                out = netlog.with_port_answer(out, port,
                                              self.rpc.get_sg_log_info_for_port(port))
            except Exception:  # noqa: BLE001 - asked again next pass
                LOG.exception("get_sg_log_info_for_port %s failed", port)
                with self._lock:
                    self._ports.add(port)
        return out

    def applied(self, logs: dict[str, netlog.LogInfo]) -> None:
        """The flows of ``logs`` are on the switch: name their cookies."""
        if self.reader is not None:
            self.reader.log.cookies = netlog.cookies(netlog.port_logs(logs))

    def start(self) -> None:
        if self.reader is not None:
            self.reader.start()

    def stop(self) -> None:
        if self.reader is not None:
            self.reader.stop()
