#!/usr/bin/env bash
# neutrino's all-in-one for upstream's tempest network API suites and the
# advanced services' ones (run as root): neutrino.conf beside this script,
# the API on :9811, database neutrino_conf, state under
# /var/tmp/neutrino-conf (../start-aio.sh says what else can be set).
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export CONF=${CONF:-$HERE/neutrino.conf} DB=${DB:-neutrino_conf} STATE=${STATE:-/var/tmp/neutrino-conf}
exec "$HERE/../start-aio.sh"
