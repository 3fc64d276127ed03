#!/usr/bin/env bash
# Start neutrino's all-in-one for octavia-tempest-plugin with the haproxy
# provider (run as root from anywhere): a fresh PostgreSQL database $DB on
# 127.0.0.1:5432, state under $STATE, neutrino.conf beside this script, the
# API on :9736 (its network endpoint /, its load-balancer endpoint
# /load-balancer). Runs in the foreground; SIGTERM/Ctrl-C stops it cleanly.
#   VENV=.venv  DB=neutrino_lbconf  STATE=/var/tmp/neutrino-lbconf  KEEP_DB=0
#   EXTRA_CONFIG="../barbican/certificates.conf"  (more files, after these)
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
VENV=${VENV:-$REPO/.venv}
DB=${DB:-neutrino_lbconf}
STATE=${STATE:-/var/tmp/neutrino-lbconf}
mkdir -p "$STATE"
if [ "${KEEP_DB:-0}" != 1 ]; then
    psql -h 127.0.0.1 -U postgres -qc "DROP DATABASE IF EXISTS $DB" postgres
    psql -h 127.0.0.1 -U postgres -qc "CREATE DATABASE $DB" postgres
fi
cat > "$STATE/local.conf" <<CONF
[DEFAULT]
state_path = $STATE
[database]
connection = postgresql+psycopg://postgres@127.0.0.1:5432/$DB
CONF
args=(--config-file "$HERE/neutrino.conf" --config-file "$STATE/local.conf")
for extra in ${EXTRA_CONFIG:-}; do args+=(--config-file "$extra"); done
"$VENV/bin/neutrino" db upgrade "${args[@]}"
exec "$VENV/bin/neutrino" serve "${args[@]}"
