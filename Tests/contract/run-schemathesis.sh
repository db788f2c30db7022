#!/usr/bin/env bash
# Runs schemathesis against a real rooftop-server: the served OpenAPI document must describe the
# server exactly (statuses, bodies, headers, what it accepts and refuses).
#
# Usage: Tests/contract/run-schemathesis.sh PATH/TO/rooftop-server
#   SCHEMATHESIS_MAX_EXAMPLES  test cases per operation and phase (default 10: both runs take about 4 minutes on 2 cores)
#   SCHEMATHESIS_SEED          the random seed (default 20261123, so runs are reproducible)
#   SCHEMATHESIS_REPORT_DIR    where the JUnit and JSON reports go (default: a temporary directory)
#
# It builds nothing: it starts the given binary on a free port over TLS (the development CA in a
# fresh data directory), signs up a user, then runs every schemathesis check twice, once with the
# user's session token and once with the admin key. It fails on any failure, on a run that tested
# no operation, and when the server dies; the server is stopped on every path.
set -euo pipefail

server_binary="${1:?usage: $0 PATH/TO/rooftop-server}"
[ -x "$server_binary" ] || { echo "error: $server_binary is not an executable" >&2; exit 2; }
command -v schemathesis >/dev/null || { echo "error: schemathesis is not installed (pip install schemathesis)" >&2; exit 2; }

max_examples="${SCHEMATHESIS_MAX_EXAMPLES:-10}"
seed="${SCHEMATHESIS_SEED:-20261123}"
app_id="contract-tests"
admin_key="contract-admin-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"

work="$(mktemp -d "${TMPDIR:-/tmp}/rooftop-contract.XXXXXX")"
report_dir="${SCHEMATHESIS_REPORT_DIR:-$work/reports}"
mkdir -p "$report_dir"
server_pid=""

cleanup() {
    local status=$?
    if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
        kill -TERM "$server_pid" 2>/dev/null || true
        for _ in $(seq 1 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    if [ "$status" -ne 0 ] && [ -f "$work/server.log" ]; then
        echo "== server log (last 40 lines)" >&2
        tail -n 40 "$work/server.log" >&2 || true
    fi
    rm -rf "$work/data"
    [ -n "${SCHEMATHESIS_REPORT_DIR:-}" ] || rm -rf "$work"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "== starting $server_binary"
# bcrypt cost 4: schemathesis signs up many users; password hashing cost is not what is tested.
"$server_binary" serve --host 127.0.0.1 --port 0 --data-dir "$work/data" --app-id "$app_id" \
    --admin-key "$admin_key" --bcrypt-cost 4 --log-level error >"$work/server.log" 2>&1 &
server_pid=$!

base_url=""
for _ in $(seq 1 600); do
    if ! kill -0 "$server_pid" 2>/dev/null; then
        echo "error: the server exited before listening" >&2
        exit 1
    fi
    base_url="$(sed -n 's/^listening on \(https:\/\/[^ ]*\)$/\1/p' "$work/server.log" | head -n 1)"
    [ -n "$base_url" ] && break
    sleep 0.1
done
[ -n "$base_url" ] || { echo "error: the server did not listen within 60 s" >&2; exit 1; }
ca="$work/data/tls/ca.pem"
[ -f "$ca" ] || { echo "error: no development CA at $ca" >&2; exit 1; }
echo "   listening on $base_url"

fetch() { curl --silent --show-error --fail-with-body --cacert "$ca" --max-time 30 "$@"; }

fetch -o "$work/openapi.yaml" "$base_url/openapi.yaml"
session_token="$(fetch -X POST "$base_url/v1/users" -H "X-Rooftop-Application-Id: $app_id" \
    -H 'Content-Type: application/json' \
    --data '{"username": "contract-user", "password": "contract-password-1"}' |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["sessionToken"])')"
[ -n "$session_token" ] || { echo "error: no session token from sign-up" >&2; exit 1; }

# One run: every check, a bounded number of examples, the report kept for counting.
run() {
    local name="$1"; shift
    echo "== schemathesis as $name ($max_examples examples per operation, seed $seed)"
    local started=$SECONDS
    local status=0
    # Through the launcher: it sidesteps a CPython 3.11 parser bug that crashed schemathesis's
    # coverage phase now and then (see schemathesis_launcher.py).
    python3 "$(dirname "$0")/schemathesis_launcher.py" --no-color --config-file "$(dirname "$0")/schemathesis.toml" run "$work/openapi.yaml" --url "$base_url" \
        --checks all --max-examples "$max_examples" --seed "$seed" --workers 2 \
        --tls-verify "$ca" --request-timeout 30 --suppress-health-check all --generation-database none \
        --header "X-Rooftop-Application-Id: $app_id" "$@" \
        --report junit,ndjson --report-junit-path "$report_dir/$name.xml" \
        --report-ndjson-path "$report_dir/$name.ndjson" || status=$?
    echo "   schemathesis as $name: exit $status in $((SECONDS - started)) s"
    if ! kill -0 "$server_pid" 2>/dev/null; then
        echo "error: the server died during the $name run" >&2
        exit 1
    fi
    local summary=0
    python3 "$(dirname "$0")/schemathesis_summary.py" "$report_dir" "$name" || summary=$?
    if [ "$summary" -ne 0 ]; then return "$summary"; fi
    return "$status"
}

# A run whose only problems are schemathesis's own runtime errors (a KeyError inside its object
# generator, reported as "inconsistent results": CPython 3.11's parser failing under hypothesis,
# which the launcher now sidesteps; seen in CI) is run again with the next seed, at most twice: the
# same seed can draw the same broken case. A failed check is never run again, and three runs in a
# row with runtime errors fail.
run_checked() {
    local status=0 attempt
    local first_seed="$seed"
    for attempt in 1 2 3; do
        status=0
        run "$@" || status=$?
        [ "$status" -eq 3 ] || break
        if [ "$attempt" -lt 3 ]; then
            seed=$((seed + 1))
            echo "   schemathesis raised a runtime error of its own (no check failed): running $1 again with seed $seed"
        fi
    done
    seed="$first_seed"
    return "$status"
}

failed=0
# The session run leaves out POST /v1/logout: it would revoke the one token every other request of
# the run carries. The admin run and the Swift exchange tests cover it.
run_checked session --header "X-Rooftop-Session-Token: $session_token" --exclude-path /v1/logout || failed=1
run_checked admin --header "X-Rooftop-Admin-Key: $admin_key" || failed=1
if [ "$failed" -ne 0 ]; then
    echo "error: schemathesis found failures (reports in $report_dir)" >&2
    exit 1
fi
echo "== schemathesis: no failures"
