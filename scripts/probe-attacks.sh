#!/usr/bin/env bash
# scripts/probe-attacks.sh — the batch and connection-flood attacks against a
# built mcplocal, on loopback, with bounded counts; prints the proxy's RSS and
# /healthz latency before, during and after each (docs/security.md quotes the
# figures). Nothing but loopback is touched; every count is bounded.
#
#   FD_LIMIT=3000     the proxy's open-file limit (ulimit -n); MCPCTL_CONNS_MAX
#                     (default 20000) is clamped below it at start
#   CONNS=3500        silent connections of the flood (more than FD_LIMIT)
#   BATCH=20000       tools/calls in one batch; POSTS=20 such POSTs
#   INITS=1200        initializes disguised by a "METHOD" key
#   PER_USER_MAX=100  MCPCTL_SESSIONS_PER_USER_MAX of the proxy
set -euo pipefail

GO=${GO:-go}
FD_LIMIT=${FD_LIMIT:-3000}
CONNS=${CONNS:-3500}
BATCH=${BATCH:-20000}
POSTS=${POSTS:-20}
INITS=${INITS:-1200}
PER_USER_MAX=${PER_USER_MAX:-100}

cd "$(dirname "$0")/.."
dir=$(mktemp -d)
pid=
cleanup() {
	if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
	rm -rf "$dir"
}
trap cleanup EXIT

"$GO" build -o "$dir/mcplocal" ./cmd/mcplocal
port=$(( 20000 + RANDOM % 20000 ))
cat >"$dir/config.yaml" <<YAML
listen: 127.0.0.1:$port
audit: sqlite:$dir/audit.db
users:
  alice: {tokenEnv: PROBE_ALICE_TOKEN}
  bob: {tokenEnv: PROBE_BOB_TOKEN}
projects:
  p:
    servers:
      docmost: {url: http://127.0.0.1:9/mcp}
YAML

# The proxy runs under its own open-file limit; the prober keeps the shell's.
(ulimit -n "$FD_LIMIT"; PROBE_ALICE_TOKEN=probe-alice-token PROBE_BOB_TOKEN=probe-bob-token MCPCTL_SESSIONS_PER_USER_MAX=$PER_USER_MAX \
	exec "$dir/mcplocal" serve --config "$dir/config.yaml") 2>"$dir/mcplocal.log" &
pid=$!
for _ in $(seq 100); do
	if curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1; then break; fi
	sleep 0.1
done
grep -m1 "mcplocal listening" "$dir/mcplocal.log" || { cat "$dir/mcplocal.log"; exit 1; }

"$GO" run ./scripts/probeattacks --url "http://127.0.0.1:$port" --pid "$pid" --token probe-alice-token --other-token probe-bob-token \
	--batch "$BATCH" --posts "$POSTS" --inits "$INITS" --conns "$CONNS"
echo "connection refusals logged by the proxy: $(grep -c 'MCPCTL_CONNS_MAX' "$dir/mcplocal.log" || true) line(s) (one a second at most):"
grep -m3 'MCPCTL_CONNS_MAX' "$dir/mcplocal.log" || true
