"""The API's HTTP/1.1 front in a worker process: connections read and
answered by a few threads, a request given to the WSGI app only once it is
whole.

Every answer the API gives, its refusals of what cannot be parsed or is too
large included, is neutrino's own and carries a Neutron error body: granian
(hyper) answered those itself, empty-bodied, before the app saw anything,
and had no option to change it.

The threads (``api_threads``) all wait on one epoll set holding the
listening socket and every connection, each registered for one event at a
time (``EPOLLONESHOT``): the thread the kernel wakes for a connection owns
it until it registers it again, so it reads what came, runs each request
it completes on the spot and sends the answer, with no hand-off to another
thread on the way. What has not all come waits in the connection's
``Reader``, not on a thread: a client that sends part of a request and then
nothing costs a connection. ``request_read_timeout`` bounds the head, then
the body (408); ``max_request_body_size`` the body (413, unread when
declared). Pipelined requests are answered in order; an answer the client
does not take at once waits for the socket to be writable, on no thread.

Stopping (SIGTERM): no new connection; idle ones are closed; requests in
flight are answered, each with ``Connection: close``.
"""
from __future__ import annotations

import io
import logging
import select
import socket
import sys
import threading
import time
from typing import Any, Callable, Iterable
from urllib.parse import unquote_to_bytes

import httptools

from neutrino.api.limits import INTERNAL, TIMED_OUT
from neutrino.cmd.heap import Heap
from neutrino.cmd.http1 import CONTINUE, Reader, Request, answer_bytes, refusal, refusal_bytes

LOG = logging.getLogger("neutrino.api")
WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]

READ = select.EPOLLIN | select.EPOLLONESHOT
WRITE = select.EPOLLOUT | select.EPOLLONESHOT
RECV = 65536
# A connection with no request under way is closed after this long, as
# upstream's eventlet closes one after ``client_socket_timeout``; a client's
# pool opens a new one.
IDLE_TIMEOUT = 900.0
# After a last answer the client may still be sending (a refused body): what
# comes is read and dropped for this long, so that closing with unread bytes
# does not reset the connection before the client has read the answer.
LINGER = 2.0
LINGER_BYTES = 1 << 20
SWEEP = 0.25  # how often the deadlines are looked at
STOP_GRACE = 25.0  # granian's master kills a worker 30 s after asking it to stop


class Conn:
    """One client connection and what is under way on it."""

    __slots__ = ("sock", "fd", "client", "reader", "lock", "armed", "out", "close_after",
                 "lingering", "dropped", "deadline")

    def __init__(self, sock: socket.socket, client: tuple[str, str], reader: Reader) -> None:
        self.sock, self.fd, self.client, self.reader = sock, sock.fileno(), client, reader
        # Who owns the connection: a thread woken for it, or the sweeper.
        self.lock = threading.Lock()
        self.armed = False
        self.out: memoryview | None = None  # an answer's bytes the socket did not take yet
        self.close_after = False  # the connection ends once ``out`` is sent
        self.lingering = False
        self.dropped = 0
        self.deadline = 0.0


class Front:
    """A WSGI app served over HTTP/1.1 on a listening socket."""

    def __init__(self, app: WSGIApp, threads: int, max_body: int,
                 read_timeout: float, max_line: int, heap: Heap | None = None) -> None:
        self.app = app
        self.heap = heap or Heap()
        self.threads = threads
        self.max_body = max_body
        self.max_line = max_line
        self.read_timeout = read_timeout
        self.stopping = False
        self.conns: dict[int, Conn] = {}
        self.epoll = select.epoll()
        self.listener: socket.socket | None = None
        self.server = ("", "")

    # -- running and stopping --------------------------------------------------

    def serve(self, listener: socket.socket, stopped: Callable[[], bool]) -> None:
        """Serve until ``stopped()``, then finish what is in flight; on the
        calling (main) thread, which keeps the deadlines."""
        listener.setblocking(False)
        self.listener = listener
        host, port = listener.getsockname()[:2]
        self.server = (str(host), str(port))
        self.epoll.register(listener.fileno(), READ)
        self.heap.limit()  # before the threads take arenas
        for i in range(self.threads):
            threading.Thread(target=self._work, name=f"api-{i}", daemon=True).start()
        while not stopped():
            time.sleep(SWEEP)
            self._sweep(time.monotonic())
            self.heap.settle()
        self._stop()

    def _stop(self) -> None:
        self.stopping = True
        assert self.listener is not None
        try:
            self.epoll.unregister(self.listener.fileno())
        except OSError:
            pass
        self.listener.close()
        until = time.monotonic() + STOP_GRACE
        while self.conns and time.monotonic() < until:
            self._sweep(time.monotonic())
            time.sleep(SWEEP / 5)

    def _work(self) -> None:
        poll, conns = self.epoll.poll, self.conns
        listen_fd = self.listener.fileno() if self.listener is not None else -1
        while True:
            for fd, events in poll(-1, 1):
                if fd == listen_fd and not self.stopping:
                    try:
                        self._accept()
                    except Exception:  # noqa: BLE001 - logged; a thread must not die of it
                        LOG.exception("accepting connections failed")
                    continue
                conn = conns.get(fd)
                if conn is None:
                    continue
                with conn.lock:
                    if not conn.armed:
                        continue  # the sweeper took it
                    conn.armed = False
                try:
                    self._serve(conn, events)
                except Exception:  # noqa: BLE001 - logged; the connection ends
                    LOG.exception("unexpected error on a connection from %s", conn.client[0])
                    self._close(conn)

    def _accept(self) -> None:
        assert self.listener is not None
        try:
            for _ in range(64):
                try:
                    sock, addr = self.listener.accept()
                except (BlockingIOError, InterruptedError):
                    break
                except ConnectionAbortedError:
                    continue
                except OSError:  # out of descriptors, or the listener closed at a stop
                    if not self.stopping:
                        LOG.exception("accepting a connection failed")
                        time.sleep(SWEEP)  # not in a tight loop: descriptors take time to free
                    break
                sock.setblocking(False)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                conn = Conn(sock, (str(addr[0]), str(addr[1])),
                            Reader(self.max_line, self.max_body))
                self.conns[conn.fd] = conn
                conn.deadline = time.monotonic() + IDLE_TIMEOUT
                conn.armed = True
                self.epoll.register(conn.fd, READ)
        finally:
            try:
                if not self.stopping:
                    self.epoll.modify(self.listener.fileno(), READ)
            except (OSError, ValueError):  # the listener closed at a stop
                pass

    # -- a connection's turn, on the thread that owns it ----------------------

    def _serve(self, conn: Conn, events: int) -> None:
        if conn.out is not None:
            if not self._flush(conn):
                return
            if conn.close_after:
                return self._end(conn)
        elif events & (select.EPOLLIN | select.EPOLLHUP | select.EPOLLERR):
            try:
                data = conn.sock.recv(RECV)
            except (BlockingIOError, InterruptedError):
                return self._arm(conn, READ)
            except OSError:
                return self._close(conn)
            if not data:
                return self._close(conn)  # the client is gone, or done
            if conn.lingering:
                conn.dropped += len(data)
                if conn.dropped > LINGER_BYTES:
                    return self._close(conn)
                return self._arm(conn, READ)
            conn.reader.feed(data)
        self._answer_ready(conn)

    def _answer_ready(self, conn: Conn) -> None:
        """Answer the requests complete so far, in order, then wait for more."""
        reader = conn.reader
        while reader.done:
            request = reader.done.popleft()
            status, headers, body = self._run(request, conn)
            self.heap.answered(len(body))
            keep = (request.keep_alive and not self.stopping and not reader.upgraded
                    and (reader.refused is None or bool(reader.done)))
            answer = answer_bytes(status, headers, body, keep, request.version == "1.0",
                                  request.method == "HEAD")
            if not self._send(conn, answer, close_after=not keep):
                return
            if not keep:
                return self._end(conn)
        if reader.refused is not None:
            if self._send(conn, refusal_bytes(reader.refused), close_after=True):
                self._end(conn)
            return
        if reader.upgraded:
            return self._end(conn)
        if reader.continue_due:
            reader.continue_due = False
            if not self._send(conn, CONTINUE, close_after=False):
                return
        self._arm(conn, READ)

    def _send(self, conn: Conn, data: bytes, close_after: bool) -> bool:
        """Send ``data``; False when the socket took only part of it, the
        rest then waiting for it to be writable."""
        conn.out = memoryview(data)
        conn.close_after = close_after
        return self._flush(conn)

    def _flush(self, conn: Conn) -> bool:
        out = conn.out
        assert out is not None
        try:
            sent = conn.sock.send(out)
        except (BlockingIOError, InterruptedError):
            sent = 0
        except OSError:  # the client went away
            self._close(conn)
            return False
        if sent < len(out):
            conn.out = out[sent:]
            self._arm(conn, WRITE)
            return False
        conn.out = None
        return True

    def _arm(self, conn: Conn, mask: int) -> None:
        """Give the connection back to the epoll set, with its deadline."""
        reader = conn.reader
        if conn.lingering:
            pass  # its deadline stands
        elif mask == WRITE or reader.began is not None:
            conn.deadline = (reader.began if mask == READ and reader.began is not None
                             else time.monotonic()) + self.read_timeout
        else:
            conn.deadline = time.monotonic() + IDLE_TIMEOUT
            if self.stopping:
                return self._close(conn)
        with conn.lock:
            conn.armed = True
        try:
            self.epoll.modify(conn.fd, mask)
        except OSError:  # closed meanwhile by the sweeper
            pass

    def _end(self, conn: Conn) -> None:
        """The last answer is sent: read and drop what the client still
        sends for a moment, then close."""
        try:
            conn.sock.shutdown(socket.SHUT_WR)
        except OSError:
            return self._close(conn)
        conn.lingering = True
        conn.deadline = time.monotonic() + LINGER
        self._arm(conn, READ)

    def _close(self, conn: Conn) -> None:
        self.conns.pop(conn.fd, None)
        try:
            self.epoll.unregister(conn.fd)
        except (OSError, ValueError):
            pass
        conn.sock.close()
        conn.reader.close()

    # -- deadlines, on the main thread ------------------------------------------

    def _sweep(self, now: float) -> None:
        for conn in list(self.conns.values()):
            stop_idle = (self.stopping and conn.out is None and not conn.lingering
                         and not conn.reader.in_body)
            if conn.deadline > now and not stop_idle:
                continue
            with conn.lock:
                if not conn.armed:
                    continue  # a thread is on it
                conn.armed = False
            try:
                self.epoll.modify(conn.fd, 0)
            except OSError:
                pass
            if (conn.deadline <= now and conn.reader.reading and conn.out is None
                    and not conn.lingering):
                # A head or a body not finished in time.
                if self._send(conn, refusal_bytes(TIMED_OUT), close_after=True):
                    self._end(conn)
            else:
                self._close(conn)

    # -- the app ----------------------------------------------------------------

    def _run(self, request: Request, conn: Conn) -> tuple[str, list[tuple[str, str]], bytes]:
        """The app's answer to ``request``."""
        try:
            return self._call(wsgi_environ(request, self.server, conn.client))
        except Exception:
            LOG.exception("unexpected error on %s %s", request.method,
                          request.target[:200].decode("latin-1"))
            return refusal(*INTERNAL)

    def _call(self, environ: dict[str, Any]) -> tuple[str, list[tuple[str, str]], bytes]:
        started: list[Any] = []
        # PEP 3333's write() and the iterable's chunks, in the order the app
        # produced them: what was written before the iterable came first.
        out: list[bytes] = []

        def start_response(status: str, headers: list[tuple[str, str]],
                           exc_info: Any = None) -> Callable[[bytes], None]:
            started[:] = [status, headers]
            return out.append
        result = self.app(environ, start_response)
        try:
            for chunk in result:  # one by one: the iterable may write() too
                out.append(chunk)
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                close()
        status, headers = started
        return status, list(headers), b"".join(out)


def wsgi_environ(request: Request, server: tuple[str, str],
                 client: tuple[str, str]) -> dict[str, Any]:
    """PEP 3333's environ for a complete request."""
    target = request.target
    if target.startswith(b"/"):
        path, _, query = target.partition(b"?")
    else:  # absolute form (RFC 9112, 3.2.2), or "*"
        try:
            url = httptools.parse_url(target)
            path, query = url.path or b"/", url.query or b""
        except httptools.HttpParserInvalidURLError:
            path, query = target, b""
    body = request.body
    environ: dict[str, Any] = {
        "REQUEST_METHOD": request.method,
        "SCRIPT_NAME": "",
        # Percent-decoded once, the bytes as latin-1 text (PEP 3333).
        "PATH_INFO": unquote_to_bytes(path).decode("latin-1") if b"%" in path
        else path.decode("latin-1"),
        "QUERY_STRING": query.decode("latin-1"),
        "SERVER_NAME": server[0],
        "SERVER_PORT": server[1],
        "SERVER_PROTOCOL": "HTTP/" + request.version,
        "REMOTE_ADDR": client[0],
        "REMOTE_PORT": client[1],
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
        "wsgi.input_terminated": True,
    }
    keys = _ENVIRON_KEYS
    for name, value in request.headers:
        key = keys.get(name)
        if key is None:
            key = _environ_key(name)
        if not key:
            continue
        text = value.decode("latin-1")
        environ[key] = f"{environ[key]},{text}" if key in environ else text
    return environ


# A header's name as sent -> its environ key ("" for those the body's
# reading has consumed); the names clients send are few.
_ENVIRON_KEYS: dict[bytes, str] = {}
_MAX_KEYS = 1024  # a client making up names does not grow it further


def _environ_key(name: bytes) -> str:
    key = name.decode("latin-1").upper().replace("-", "_")
    if key in ("CONTENT_LENGTH", "TRANSFER_ENCODING"):
        key = ""
    elif key != "CONTENT_TYPE":
        key = "HTTP_" + key
    if len(_ENVIRON_KEYS) < _MAX_KEYS:
        _ENVIRON_KEYS[name] = key
    return key
