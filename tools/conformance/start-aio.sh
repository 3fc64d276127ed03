#!/usr/bin/env bash
# Start neutrino's all-in-one for one of the conformance runs (run as root
# from anywhere; each run's directory has a start-aio.sh that calls this
# with its own CONF, DB and STATE): a fresh PostgreSQL database $DB on
# 127.0.0.1:5432, state under $STATE, the server configured by $CONF.
# Runs in the foreground; SIGTERM/Ctrl-C stops it cleanly.
#   CONF=<run>/neutrino.conf  VENV=.venv  DB=...  STATE=/var/tmp/...  KEEP_DB=0
#   EXTRA_CONFIG="barbican/certificates.conf"  (more files, after these)
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
VENV=${VENV:-$REPO/.venv}
DB=${DB:?DB: the database to make}
STATE=${STATE:?STATE: the state directory}
CONF=${CONF:?CONF: the server configuration}
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
args=(--config-file "$CONF" --config-file "$STATE/local.conf")
for extra in ${EXTRA_CONFIG:-}; do args+=(--config-file "$extra"); done
"$VENV/bin/neutrino" db upgrade "${args[@]}"
exec "$VENV/bin/neutrino" serve "${args[@]}"
