"""Start time, request latency and memory of one metadata namespace proxy (to a stub
agent socket, on 127.0.0.1). Run from the repository root:
``python benchmarks/metadata_proxy_bench.py``."""
import http.client
import os
import sys
import tempfile
import threading
import time
import uuid

sys.path.insert(0, ".")
from neutrino.agents.metadata.proxies import ROUTER, MetadataProxies  # noqa: E402
from tests.conftest import free_port  # noqa: E402
from tests.metadata.recording import FakeAgent  # noqa: E402

d = tempfile.mkdtemp()
agent = FakeAgent(os.path.join(d, "s"))
threading.Thread(target=agent.serve_forever, daemon=True).start()
p = MetadataProxies(d, agent.server_address, ROUTER)
port = free_port()
rid = str(uuid.uuid4())
t0 = time.perf_counter()
p.ensure(rid, None, "127.0.0.1", port)
start = time.perf_counter() - t0
lat = []
for _ in range(300):
    t = time.perf_counter()
    c = http.client.HTTPConnection("127.0.0.1", port)
    c.request("GET", "/latest/meta-data/instance-id")
    c.getresponse().read()
    c.close()
    lat.append((time.perf_counter() - t) * 1000)
lat.sort()
pid = open(p.pid_file(rid)).read().strip()
rss = [line.split()[1] for line in open(f"/proc/{pid}/status") if line.startswith("VmRSS")][0]
p.reap(set())
print(f"proxy start {start*1000:.0f} ms; request p50 {lat[150]:.2f} ms p95 {lat[284]:.2f} ms "
      f"max {lat[-1]:.2f} ms (300 requests); RSS {int(rss)//1024} MiB")
