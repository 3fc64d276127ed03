#!/usr/bin/env bash
# A Barbican in the conformance Keystone's catalog (key-manager, public
# endpoint http://127.0.0.1:$PORT), for octavia-tempest-plugin's TLS tests
# with [service_available] barbican = True. Runs in the foreground.
#   VENV=<repo>/.venv  PORT=9311  STATE=/var/tmp/neutrino-barbican
#   SERVICE_USER=barbican (password secret, admin in project service)
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
CONF_DIR=${CONF_DIR:-/work/shared/conformance}
. "$CONF_DIR/common.sh"
VENV=${VENV:-$REPO/.venv}
PORT=${PORT:-9311}
STATE=${STATE:-/var/tmp/neutrino-barbican}
SERVICE_USER=${SERVICE_USER:-barbican}
if ! osc user show "$SERVICE_USER" >/dev/null 2>&1; then
    osc user create --project service --password secret "$SERVICE_USER" >/dev/null
fi
osc role add --project service --user "$SERVICE_USER" admin
SERVICE_TYPE=key-manager "$CONF_DIR/set-endpoint.sh" "http://127.0.0.1:$PORT"
rm -rf "$STATE"
exec "$VENV/bin/python" "$HERE/serve.py" "$KEYSTONE_URL" "$SERVICE_USER" service "$PORT" "$STATE"
