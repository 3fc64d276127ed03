"""A granian worker serving the API's front (``cmd/front.py``): each request
is given to ``BodyFirst.start`` on one of granian's own threads.

granian's RSGI worker would hand every request to the event loop as a
coroutine, and the front would then hand it to a thread and wait on the
loop for the answer: four thread wake-ups a request where granian's WSGI
worker has two, which made a shown port half as slow again. Here granian's
scheduler, which runs on granian's blocking threads, calls ``start``; those
threads are the front's ``threads`` (granian's RSGI worker allows one,
enough for a hand-off to the loop, not to run the app). This is granian's
``MPServer._spawn_rsgi_worker`` with those two changes; its arguments are
granian's, passed through.
"""
from __future__ import annotations

import asyncio
from typing import Any

from neutrino.cmd.front import BodyFirst


def serve(worker_id: int, front: BodyFirst, sock: Any, ipc: Any, loop: Any,
          runtime_mode: Any, runtime_threads: int, runtime_blocking_threads: int | None,
          blocking_threads: int, blocking_threads_idle_timeout: int, backpressure: int,
          task_impl: Any, http_mode: Any, http1_settings: Any, http2_settings: Any,
          websockets: bool, static_path: Any, log_access_fmt: str | None, ssl_ctx: Any,
          scope_opts: dict[str, Any], metrics: Any) -> None:
    # deferred: granian is loaded only by a process that serves the API with it
    from granian._granian import CallbackScheduler, RSGIWorker
    from granian._signals import set_loop_signals
    from granian.server.common import WORKERS_METHODS

    shutdown_event = set_loop_signals(loop)
    stopped = asyncio.Event()
    shutdown_event.add_cb(lambda: loop.call_soon_threadsafe(stopped.set))
    front.open(loop)
    worker = RSGIWorker(worker_id, sock, ipc, runtime_threads, runtime_blocking_threads,
                        front.threads, blocking_threads_idle_timeout, backpressure,
                        http_mode, http1_settings, http2_settings, websockets, static_path,
                        *ssl_ctx, metrics)
    # granian's scheduler calls its function with each request's watcher,
    # which holds the request's scope and protocol.
    scheduler = CallbackScheduler(loop, None, None, None, None)
    scheduler._schedule_fn = lambda watcher: front.start(watcher.scope, watcher.proto)
    listen = getattr(worker, WORKERS_METHODS[runtime_mode][(sock[0] or sock[1]).is_uds()])
    listen(scheduler, loop, shutdown_event)
    loop.run_until_complete(stopped.wait())
    front.close()
