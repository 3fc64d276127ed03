"""The pieces of supervision and /healthcheck that need no server: the
back-off rule, how a death is named, the brokers a transport URL names,
and who may reach /healthcheck without a token."""
from __future__ import annotations

import signal
import socket
import time
from typing import Any, Callable, Iterable

from neutrino.api.app import with_auth
from neutrino.api.healthcheck import Probe
from neutrino.cmd.supervise import Backoff, exit_status
from neutrino.db.health import Reachability
from neutrino.rpc.health import brokers


def test_a_child_that_keeps_dying_waits_longer_each_time_up_to_the_cap() -> None:
    backoff = Backoff(first=0.5, cap=3.0, healthy_after=10.0)
    assert [backoff.after_death(1.0) for _ in range(6)] == [0.0, 0.5, 1.0, 2.0, 3.0, 3.0]


def test_a_healthy_run_forgets_earlier_deaths() -> None:
    backoff = Backoff(first=0.5, cap=3.0, healthy_after=10.0)
    for _ in range(4):
        backoff.after_death(1.0)
    assert backoff.after_death(10.0) == 0.0
    assert backoff.after_death(1.0) == 0.0
    assert backoff.after_death(1.0) == 0.5


def test_a_fresh_backoff_keeps_the_rule_not_the_count() -> None:
    backoff = Backoff(first=0.5, cap=3.0, healthy_after=10.0)
    backoff.after_death(1.0)
    backoff.after_death(1.0)
    assert backoff.fresh().after_death(1.0) == 0.0


def test_exit_status_names_the_signal_or_the_code() -> None:
    assert exit_status(-int(signal.SIGKILL)) == "killed by signal SIGKILL"
    assert exit_status(3) == "exit code 3"
    assert exit_status(0) == "exit code 0"


def test_brokers_of_a_transport_url() -> None:
    assert brokers("rabbit://u:p@h1:5673,u:p@h2/vh") == [("h1", 5673), ("h2", 5672)]
    assert brokers("rabbit://guest:guest@127.0.0.1:5672/") == [("127.0.0.1", 5672)]
    assert brokers("rabbit://[::1]:5672/") == [("::1", 5672)]


def _recorder(name: str, seen: list[tuple[str, dict[str, Any]]]) -> Any:
    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        seen.append((name, dict(environ)))
        return [b""]
    return app


def test_healthcheck_is_anonymous_without_a_token_and_sheds_identity_headers() -> None:
    seen: list[tuple[str, dict[str, Any]]] = []
    app = with_auth(_recorder("app", seen), _recorder("auth", seen))
    app({"PATH_INFO": "/healthcheck", "HTTP_X_ROLES": "admin", "HTTP_X_PROJECT_ID": "p"},
        lambda *a: None)
    app({"PATH_INFO": "/healthcheck", "HTTP_X_AUTH_TOKEN": "t"}, lambda *a: None)
    app({"PATH_INFO": "/v2.0/networks"}, lambda *a: None)
    assert [name for name, _ in seen] == ["app", "auth", "auth"]
    assert "HTTP_X_ROLES" not in seen[0][1] and "HTTP_X_PROJECT_ID" not in seen[0][1]


def test_a_database_on_a_closed_port_is_reported_unreachable_within_the_timeout() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    probe = Probe("database unreachable",
                  Reachability(f"postgresql://postgres@127.0.0.1:{port}/neutron", 1.0))
    started = time.monotonic()
    detail = probe.failure()
    assert detail is not None and str(port) in detail
    assert time.monotonic() - started < 5


def test_a_probe_answer_is_reused_while_fresh() -> None:
    calls: list[int] = []

    def check() -> str | None:
        calls.append(1)
        return None
    probe = Probe("x", check, cache_time=60)
    assert probe.failure() is None and probe.failure() is None
    assert len(calls) == 1
