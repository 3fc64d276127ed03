"""A provider for tests: Octavia's no-op behaviour, and every call it gets
written as one JSON line to the file ``NEUTRINO_TEST_PROVIDER_LOG`` names."""
from __future__ import annotations

import json
import os
from typing import Any

from neutrino.plugins.octavia.noop_provider import NoopProvider
from neutrino.resources.lb_graph import LoadBalancer


class RecordingProvider(NoopProvider):
    """Records, then reports as the noop provider."""

    name = "recording"

    def _record(self, call: str, lb: LoadBalancer, *args: Any) -> None:
        with open(os.environ["NEUTRINO_TEST_PROVIDER_LOG"], "a") as out:
            out.write(json.dumps({"call": call, "lb": lb.id, "args": list(args),
                                  "status": lb.provisioning_status}) + "\n")


def _recorded(call: str) -> Any:
    def method(self: RecordingProvider, lb: LoadBalancer, *args: Any) -> None:
        self._record(call, lb, *args)
        NoopProvider._done(self, lb)
    return method


for _call in ("loadbalancer_create", "loadbalancer_update", "loadbalancer_delete",
              "loadbalancer_failover", "listener_create", "listener_update", "listener_delete",
              "pool_create", "pool_update", "pool_delete", "member_create", "member_update",
              "member_delete", "member_batch_update", "health_monitor_create",
              "health_monitor_update", "health_monitor_delete", "l7policy_create",
              "l7policy_update", "l7policy_delete", "l7rule_create", "l7rule_update",
              "l7rule_delete"):
    setattr(RecordingProvider, _call, _recorded(_call))
