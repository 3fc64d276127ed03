# `make run` and `make test` work on a fresh machine: they create .venv,
# install neutrino and its test tools, and the Debian packages the suite
# needs when they are missing and we are root.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
CONFIG ?= etc/neutrino-aio.conf
CONFIG_ARGS := $(foreach f,$(CONFIG),--config-file $(f))
# Debian packages the test suite uses, and the headers mysqlclient (the
# fast MySQL/MariaDB driver) builds against.
DEBIAN_PACKAGES := curl socat openvswitch-switch dnsmasq-base nftables busybox iproute2 ethtool iputils-ping isc-dhcp-client haproxy keepalived radvd ndisc6 libmariadb-dev pkg-config mariadb-server galera-4 rsync strongswan-charon strongswan-swanctl libcharon-extra-plugins gobgpd bird2 libstrongswan-extra-plugins chromium chromium-driver
PYTEST_ARGS ?=

.PHONY: run test fuzz install bytecode system-deps bench clean

install: $(STAMP) bytecode

# neutrino is installed editable, so pip compiles none of its modules; a
# process that may not write bytecode (PYTHONDONTWRITEBYTECODE, a read-only
# tree) would compile all of them again at every start: 0.2 s of a server's
# and of each worker's start-up. compileall rewrites only what changed.
bytecode: $(STAMP)
	$(PY) -m compileall -q neutrino

$(STAMP): pyproject.toml | system-deps
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,mysql]'
	touch $(STAMP)

system-deps:
	@missing=""; for p in $(DEBIAN_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
		else echo "missing Debian packages:$$missing (run as root to install them)"; fi; \
	fi

run: install
	$(VENV)/bin/neutrino db upgrade $(CONFIG_ARGS)
	exec $(VENV)/bin/neutrino serve $(CONFIG_ARGS)

# The keystone, placement and barbican tests' own venvs (tests/keystone/conftest.py,
# tests/placement/conftest.py, tests/barbican/conftest.py) and upstream Neutron's
# (tests/upstream_venv.py) take a fresh clone minutes to build. Built
# beside the first tests, they are ready when the tests reach them instead
# of holding an xdist worker that long; a build that failed is tried again,
# and reported, by the tests that need it.
test: install system-deps
	@mkdir -p var
	@$(PY) tests/keystone/conftest.py > var/keystone-venv.log 2>&1 & \
	$(PY) tests/placement/conftest.py > var/placement-venv.log 2>&1 & \
	$(PY) tests/barbican/conftest.py > var/barbican-venv.log 2>&1 & \
	$(PY) tests/upstream_venv.py > var/neutron-venv.log 2>&1 & \
	$(PY) -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder --durations=25 $(PYTEST_ARGS); \
	status=$$?; wait; exit $$status

# `make fuzz`: the fuzzing suite of `make test` (tests/fuzz/), longer and
# random: FUZZ_EXAMPLES cases per operation and kind of data, FUZZ_SECONDS
# per backend and identity.
FUZZ_EXAMPLES ?= 50
FUZZ_SECONDS ?= 1800
fuzz: install
	NEUTRINO_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) NEUTRINO_FUZZ_SECONDS=$(FUZZ_SECONDS) \
	NEUTRINO_FUZZ_RANDOM=1 $(PY) -m pytest -q -p no:cacheprovider tests/fuzz $(PYTEST_ARGS)

# `make bench`: neutrino on a fresh MariaDB database, benchmarks/api_bench.py
# against it; UPSTREAM=1 also stands up upstream Neutron (../shared/anchors)
# on the same MariaDB with the same API process count and writes the side-by-
# side table to docs/performance-side-by-side.md. URL=... benches a running server.
bench: install
ifdef URL
	$(PY) benchmarks/api_bench.py --url $(URL) $(BENCH_ARGS)
else
	$(PY) benchmarks/side_by_side.py $(if $(filter 1,$(UPSTREAM)),--upstream) $(BENCH_ARGS)
endif

clean:
	rm -rf $(VENV) var .pytest_cache
	find neutrino -name __pycache__ -prune -exec rm -rf {} +
