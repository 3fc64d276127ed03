#!/usr/bin/env bash
# neutrino's all-in-one for octavia-tempest-plugin with the haproxy provider
# (run as root): neutrino.conf beside this script, the API on :9736 (its
# network endpoint /, its load-balancer endpoint /load-balancer), database
# neutrino_lbconf, state under /var/tmp/neutrino-lbconf (../start-aio.sh
# says what else can be set).
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export CONF=${CONF:-$HERE/neutrino.conf} DB=${DB:-neutrino_lbconf} STATE=${STATE:-/var/tmp/neutrino-lbconf}
exec "$HERE/../start-aio.sh"
