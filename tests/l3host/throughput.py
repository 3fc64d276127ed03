"""TCP throughput between namespaces, either way of one connection.

``upload``: the client sends to the server; ``download``: the server sends
to the client (so traffic towards a SNATed instance, which cannot be
connected to, is measured on a connection it opened). Bits per second of
``size`` bytes, timed by the client; limits are asserted as bounds on it.
"""
from __future__ import annotations

import subprocess
import sys
import time

SERVER = ("import socket,sys\ns=socket.socket();s.setsockopt(socket.SOL_SOCKET,"
          "socket.SO_REUSEADDR,1);s.bind(('',int(sys.argv[1])));s.listen(1);s.settimeout(60)\n"
          "print('ready',flush=True)\nc,_=s.accept();c.settimeout(60)\n"
          "if sys.argv[2]=='download':\n c.sendall(b'x'*int(sys.argv[3]));c.shutdown(socket.SHUT_WR)\n"
          "while c.recv(65536): pass\nc.close()")
CLIENT = ("import socket,sys,time\nfor _ in range(50):\n try:\n  s=socket.create_connection("
          "(sys.argv[1],int(sys.argv[2])),timeout=2); break\n except OSError: time.sleep(0.1)\n"
          "s.settimeout(60);t=time.monotonic();n=int(sys.argv[4])\n"
          "if sys.argv[3]=='download':\n got=0\n while True:\n  b=s.recv(65536)\n"
          "  if not b: break\n  got+=len(b)\n assert got==n, got\n s.close()\n"
          "else:\n s.sendall(b'x'*n);s.shutdown(socket.SHUT_WR);s.recv(1)\n"
          "print(time.monotonic()-t)")


def throughput(client: str, server: str, address: str, mode: str = "upload",
               size: int = 1_000_000, port: int = 5001) -> float:
    """Bits per second of one transfer between namespace ``client`` and the
    server in namespace ``server`` reached at ``address``."""
    srv = subprocess.Popen(["ip", "netns", "exec", server, sys.executable, "-c", SERVER,
                            str(port), mode, str(size)], stdout=subprocess.PIPE, text=True)
    try:
        assert srv.stdout is not None and srv.stdout.readline().strip() == "ready"
        started = time.monotonic()
        done = subprocess.run(["ip", "netns", "exec", client, sys.executable, "-c", CLIENT,
                               address, str(port), mode, str(size)],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, (done.stderr, time.monotonic() - started)
        return size * 8 / float(done.stdout)
    finally:
        srv.wait(60)
