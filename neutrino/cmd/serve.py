"""``neutrino serve``: the API under granian, one process per ``api_workers``,
and the RPC endpoints in one more process when a ``transport_url`` is set.
With ``transport_url = fake://`` (the all-in-one) everything runs in this
one process instead: see ``neutrino.aio``.

granian's master brings what a production server needs and we would
otherwise write: pre-forked workers, graceful shutdown on SIGTERM (in-flight
requests finish), worker respawn on SIGHUP and on a worker's death (with
our back-off, ``_granian``). Each worker serves HTTP/1.1 with our own front
(``cmd/worker.py``, ``cmd/front.py``) rather than granian's hyper, which
answered what it could not parse or found too large itself, empty-bodied.
The app is built in each worker after the fork so no database connection
is shared between processes.
"""
from __future__ import annotations

import gc
import logging
import multiprocessing
import multiprocessing.connection
import multiprocessing.process
import os
import signal
import time
from pathlib import Path
from typing import Any

from oslo_config import cfg

from neutrino import metrics
from neutrino.api.healthcheck import Check, Probe
from neutrino.cmd import worker
from neutrino.cmd.front import Front
from neutrino.cmd.logs import switch_access_log
from neutrino.cmd.supervise import (
    STOPS,
    Backoff,
    RunningFlag,
    Supervised,
    exit_status,
    start_with_stops_held,
)
from neutrino.conf.options import database_url
from neutrino.db import migrate
from neutrino.plugins.loader import PluginLoadError
from neutrino.process import die_with_parent
from neutrino.rpc import server as rpc_server
from neutrino.rpc.transport import configured_url, in_process
from neutrino.service import RpcPlugins, StartupError, build_api, build_wsgi

LOG = logging.getLogger(__name__)


def check_schema(conf: cfg.ConfigOpts) -> None:
    """SQLite (all-in-one) is migrated in place; server databases must be
    upgraded explicitly with ``neutrino db upgrade``, as upstream."""
    url = database_url(conf)
    if migrate.is_current(url):
        return
    if url.startswith("sqlite"):
        _upgrade_in_child(url)
        return
    head = migrate.head()
    current = migrate.current(url)
    if current != head:
        raise StartupError(f"[database] connection: schema is {migrate.describe(current)}, "
                           f"not {head}; "
                           f"run 'neutrino db upgrade' with the same configuration")


def _upgrade_in_child(url: str) -> None:
    """Upgrade in a forked child: Alembic and the migration scripts would
    otherwise stay in this process and in every worker forked from it
    (a worker's memory is budgeted: docs/performance.md, start-up and
    memory)."""
    child = multiprocessing.get_context("fork").Process(
        target=migrate.upgrade, args=(url,), name="neutrino-db-upgrade")
    child.start()
    child.join()
    if child.exitcode != 0:
        raise StartupError(f"[database] connection: upgrading the schema failed "
                           f"(exit code {child.exitcode}); see the lines above")


class Server:
    """The API's workers under granian's master, which is this process."""

    def __init__(self, conf: cfg.ConfigOpts, probes: list[Probe] | None = None) -> None:
        self.conf = conf
        self.probes = probes or []

    def run(self) -> None:
        # deferred: granian is loaded only by a process that serves the API with it
        from granian.constants import HTTPModes, Interfaces
        conf, probes = self.conf, self.probes
        server = _granian()(
            "neutrino", address=conf.bind_host, port=conf.bind_port,
            # granian's master only: each worker serves HTTP with our front
            # (cmd/worker.py, cmd/front.py), not granian's.
            interface=Interfaces.RSGI, http=HTTPModes.http1, websockets=False,
            workers=conf.api_workers or os.cpu_count() or 1,
            # A worker that has not finished its requests in this time is killed.
            workers_kill_timeout=30,
            # A worker that dies is replaced (``_granian``), not the whole server stopped.
            respawn_failed_workers=True,
            # granian's own lines (listening, workers, shutting down) go
            # where ours do.
            log_dictconfig={"loggers": {"_granian": {"level": "INFO", "propagate": True}}})
        server.backoff = Backoff.from_conf(conf)
        server.serve(spawn_target=_worker, target_loader=lambda: load_app(conf, probes),
                     wrap_loader=False)


def _granian() -> type:
    """granian's server, with two changes to its master.

    Each worker is forked while the master holds the stops back: the child
    starts with them blocked (the mask is inherited) and ``_worker`` lets
    them in once its own handlers are set.

    A worker that dies is logged at ERROR with how it ended and replaced,
    after a wait that grows while it keeps dying (``supervise.Backoff``);
    granian's own respawn stops the whole server when a worker dies twice
    in a few seconds."""
    # deferred: granian is loaded only by a process that serves the API with it
    from granian.server import Server as Granian

    class Master(Granian):  # type: ignore[misc, valid-type]
        backoff: Backoff

        def _spawn_worker(self, *args: Any, **kwargs: Any) -> Any:
            worker = super()._spawn_worker(*args, **kwargs)
            start = worker.start
            worker.start = lambda: start_with_stops_held(start)
            worker.is_alive = lambda: _running(worker.inner)
            return worker

        def _serve_loop(self, spawn_target: Any, target_loader: Any) -> None:
            backoffs: dict[int, Backoff] = {}
            due: dict[int, float] = {}  # worker index -> when to start it again
            while True:
                wake = min(due.values(), default=None)
                if not self.interrupt_children:  # a reload clears the event, not the deaths
                    self.main_loop_interrupt.wait(
                        None if wake is None else max(0.0, wake - time.monotonic()))
                # Cleared before looking, so that what comes meanwhile wakes the next wait.
                self.main_loop_interrupt.clear()
                if self.interrupt_signal:
                    break
                while self.interrupt_children:
                    idx = self.interrupt_children.pop(0)
                    backoff = backoffs.setdefault(idx, self.backoff.fresh())
                    due[idx] = time.monotonic() + self._mourn(idx, backoff)
                for idx in [i for i, when in due.items() if when <= time.monotonic()]:
                    del due[idx]
                    self._respawn_workers([idx], spawn_target, target_loader)
                if self.reload_signal:
                    self._reload(spawn_target, target_loader)

        def _mourn(self, idx: int, backoff: Backoff) -> float:
            """Log a worker's death; the wait before it is replaced."""
            worker = self.wrks[idx]
            delay = backoff.after_death(time.monotonic() - worker.birth)
            LOG.error("API worker-%s (pid %s) died: %s; starting it again in %.1f s",
                      idx + 1, worker.inner.pid, exit_status(worker.inner.exitcode), delay)
            metrics.process_died(worker.inner.pid)
            return delay
    return Master


def _running(process: Any) -> bool:
    """Whether a worker process has not exited, told by its sentinel.

    granian's watcher thread and its stop both wait for a worker; the one
    that loses the race gets ECHILD, which multiprocessing answers as "still
    running", and the stop then killed a worker that had just exited and
    logged that it "refused to gracefully stop"."""
    return process.sentinel is not None and not multiprocessing.connection.wait([process.sentinel], 0)


def load_app(conf: cfg.ConfigOpts, probes: list[Probe] | None = None) -> Any:
    """The WSGI app, built in a worker just after the fork."""
    die_with_parent()  # a master killed with SIGKILL takes its workers along
    switch_access_log(conf)
    _forget_masters_children()
    app = build_wsgi(conf, probes=probes)
    tune_gc()
    return Front(app, threads=conf.api_threads,
                 max_body=conf.oslo_middleware.max_request_body_size,
                 read_timeout=conf.request_read_timeout,
                 max_line=conf.max_header_line)


def _worker(*args: Any, **kwargs: Any) -> None:
    """Our worker (``cmd/worker.py``), ended as soon as it has stopped: a
    worker that cast to agents holds oslo.messaging connection threads that
    would keep its interpreter from exiting (seen as orphaned workers after
    a stop)."""
    # deferred: granian is loaded only by a process that serves the API with it
    from granian.server.mp import WorkerProcess
    # Until granian sets a worker's own handlers, after the app has loaded,
    # the worker runs the master's, inherited with the fork: they note a
    # stop in the master's state, in this process, where nothing looks. A
    # server stopped while its workers loaded waited out
    # ``workers_kill_timeout`` (30 s) for them and then killed them. The
    # stops were held back since the fork (``_granian``): one that came
    # meanwhile is handled as the mask lets it in.
    for sig in STOPS:
        signal.signal(sig, _stop_while_loading)
    code = 0
    try:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPS)
        WorkerProcess.wrap_target(worker.serve)(*args, **kwargs)
    except Exception:  # noqa: BLE001 - the master logs the exit status
        LOG.exception("API worker failed")
        code = 1
    finally:
        logging.shutdown()
        os._exit(code)


def _stop_while_loading(signum: int, frame: Any) -> None:
    """A worker asked to stop before it serves: nothing is in flight, so it
    ends at once. Not by raising SystemExit: a handler runs wherever the
    interpreter checks for signals, a weakref callback or ``__del__`` among
    them, where an exception is printed and dropped and the load went on."""
    os._exit(0)


def _forget_masters_children() -> None:
    """A worker is forked with multiprocessing's record of the master's
    children (the RPC process); at exit multiprocessing would try to join
    that process, which only the master can."""
    multiprocessing.process._children.clear()  # type: ignore[attr-defined]


def tune_gc() -> None:
    """Keep the cyclic garbage collector off the request path.

    What start-up built lives as long as the process: frozen, full
    collections stop walking it (hundreds of thousands of objects of
    SQLAlchemy, oslo and our resource maps). A list of 1,000 ports
    allocates tens of thousands of containers, none of them in cycles, and
    the default threshold (700) would run a collection every few rows.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 20, 20)


def run(conf: cfg.ConfigOpts) -> None:
    check_schema(conf)
    if conf.metrics.enabled and not in_process(conf):
        # before anything counts: the workers and the RPC process count into files
        metrics.prepare_multiprocess(Path(conf.state_path) / "metrics")
    try:
        api = build_api(conf)  # fail fast on bad plugin/driver configuration
    except PluginLoadError as exc:
        raise StartupError(str(exc)) from None
    plugin = api.plugin
    initialize = getattr(plugin, "initialize", None)
    if initialize is not None:
        initialize()  # once per server, before the workers fork (ML2 segment pools)
    if in_process(conf):
        # deferred: the all-in-one's agents and host wiring would otherwise
        # be in every API worker forked from this process (issue 37)
        from neutrino.aio import run as aio
        aio.run(conf, api)
        return
    plugin.db.dispose()
    # Each worker builds its own API after the fork (``load_app``); this
    # one, kept, would be in every worker's memory besides (about 1 MB,
    # issue 37), and freed here its room is what the worker builds in.
    del api, plugin, initialize
    gc.collect()
    # What is left lives as long as the server: frozen, the workers'
    # collections never write to it, so its pages stay shared with this
    # process instead of being copied into each worker (its own memory
    # after start-up about a third less; issue 37).
    gc.freeze()
    LOG.info("neutrino-server on %s:%s, %s workers, auth_strategy=%s",
             conf.bind_host, conf.bind_port, conf.api_workers or os.cpu_count(),
             conf.auth_strategy)
    rpc = _supervised_rpc(conf) if configured_url(conf) else None
    if rpc is None:
        LOG.info("no transport_url: agents cannot reach this server (API only)")
    probes = [] if rpc is None else [Probe("RPC process not running", rpc_down(rpc.running))]
    master = os.getpid()
    try:
        Server(conf, probes).run()
    finally:
        # Only the master owns the RPC process.
        if rpc is not None and os.getpid() == master:
            rpc.stop(RPC_STOP_GRACE)


RPC_STOP_GRACE = 10.0  # seconds the RPC process gets to stop before it is killed


def _supervised_rpc(conf: cfg.ConfigOpts) -> Supervised:
    """The RPC process, started again whenever it dies; its flag is up while
    it serves, for the workers' ``/healthcheck``."""
    in_rpc = RpcPlugins(conf)
    running = RunningFlag()
    return Supervised(
        "RPC process",
        lambda: rpc_server.start_process(conf, in_rpc.endpoints, in_rpc.tasks,
                                         ready=lambda: running.set(True)),
        Backoff.from_conf(conf), running).start()


def rpc_down(running: RunningFlag) -> Check:
    def check() -> str | None:
        return None if running else "the master reports it is not serving"
    return check
