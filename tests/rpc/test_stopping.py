"""Servers and agents stop promptly: their RPC servers stop and wait
together, and an idle RabbitMQ listener looks up often enough to notice."""
from __future__ import annotations

import threading
from pathlib import Path

from neutrino.rpc import transport
from neutrino.rpc.servers import stop_all
from tests.rpc.bus import agent_conf


class Server:
    """An RPC server whose ``wait`` returns only once every server of the
    group is waiting (a barrier): waits made one after another never pass."""

    def __init__(self, barrier: threading.Barrier) -> None:
        self.barrier, self.stopped, self.waited = barrier, False, False

    def stop(self) -> None:
        self.stopped = True

    def wait(self) -> None:
        assert self.stopped
        self.barrier.wait()  # raises BrokenBarrierError after its timeout
        self.waited = True


def test_rpc_servers_wait_for_their_work_together_not_one_after_another() -> None:
    barrier = threading.Barrier(4, timeout=30)
    servers = [Server(barrier) for _ in range(4)]
    stop_all(servers)
    assert all(s.waited for s in servers)
    assert not barrier.broken


def test_an_idle_rabbitmq_listener_waits_at_most_a_second_between_looks(
        tmp_path: Path, vhost: str) -> None:
    """oslo.messaging lets an idle listener wait five seconds before it
    looks at its stop flag again; a transport of ours caps that wait."""
    from oslo_messaging._drivers import amqpdriver
    rpc = transport.rpc_transport(agent_conf(tmp_path, vhost, "idle"))
    try:
        assert amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MAX == transport.LISTENER_IDLE_WAIT_S
        assert transport.LISTENER_IDLE_WAIT_S <= 1.0
    finally:
        rpc.cleanup()
