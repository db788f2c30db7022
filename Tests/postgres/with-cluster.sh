#!/usr/bin/env bash
# Runs a command beside a throwaway PostgreSQL cluster: initdb in a temporary directory, the server
# on 127.0.0.1 at a free port (trust authentication, loopback only), stopped and removed when the
# command ends, whatever its outcome. The command sees the cluster's URL in
# ROOFTOP_TEST_POSTGRES_URL (user `postgres`, database `postgres`); the PostgreSQL tests create a
# database of their own in it.
#
#   Tests/postgres/with-cluster.sh swift test
#
# The cluster is throwaway, so it runs without fsync (the storage's own durability is what the
# tests check, through the server process), and allows a few prepared transactions (a test
# checks that one does not hold pulls back). Needs Debian's `postgresql` package. As root, the cluster runs as the `postgres` user (initdb
# refuses root).
set -euo pipefail

bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)"
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
    echo "with-cluster: no PostgreSQL server is installed (apt-get install postgresql)" >&2
    exit 1
fi

dir="$(mktemp -d /tmp/rooftop-postgres-XXXXXX)"
as_owner() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
if [ "$(id -u)" -eq 0 ]; then chown postgres "$dir"; fi
stop() {
    as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$dir"
}
trap stop EXIT

port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --no-locale >"$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log" >&2; exit 1; }
as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=1000 -c fsync=off -c max_prepared_transactions=4" start >/dev/null \
    || { cat "$dir/server.log" >&2; exit 1; }
echo "with-cluster: PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port"

export ROOFTOP_TEST_POSTGRES_URL="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
set +e
"$@"
status=$?
set -e
exit "$status"
