#!/usr/bin/env bash
# scripts/deps.sh — `make deps`: install what `make test` needs beyond Go, once.
#
# Idempotent: each step checks first and does nothing when its need is met, so
# a second run takes about a second. It installs:
#   - PostgreSQL's server binaries (initdb, postgres), for the Postgres audit
#     store's tests, which start a throwaway server (apt: postgresql);
#   - HAProxy, the load balancer of the cluster target (docs/deploy/haproxy.cfg;
#     apt: haproxy);
#   - Node.js 20+ and npm, for the official MCP conformance suite (apt: nodejs npm);
#   - the conformance suite itself: `npm ci` in tools/conformance, from its
#     lockfile, only when node_modules is missing or older than the lockfile;
#   - the official TypeScript SDK client (tools/tsclient), the same way;
#   - two public MCP proxies the thirdparty specs judge (tools/thirdparty);
#   - the Go modules (go mod download).
# Docker is not installed here: `make test` starts (and afterwards stops) one
# for the container specs through scripts/docker.sh.
#
# Installing packages needs root and apt-get; without them a missing piece is
# an error saying what to install. `make run` needs none of this.
set -euo pipefail
cd "$(dirname "$0")/.."

CONFORMANCE_DIR=tools/conformance
NODE_MIN_MAJOR=20 # @modelcontextprotocol/conformance 0.1.13 needs Node 20

say() { echo "deps: $*"; }
die() { echo "deps: $*" >&2; exit 1; }

apt_updated=""
apt_install() {
  [ "$(id -u)" = 0 ] || die "$1 is missing and installing it needs root: run 'sudo apt-get install -y $*', then 'make deps' again"
  command -v apt-get >/dev/null 2>&1 || die "$1 is missing and there is no apt-get here: install $* yourself"
  export DEBIAN_FRONTEND=noninteractive
  if [ -z "$apt_updated" ]; then
    apt-get update -qq || die "apt-get update failed"
    apt_updated=1
  fi
  say "installing $*"
  apt-get install -y -qq --no-install-recommends "$@" >/dev/null || die "apt-get install $* failed"
}

# PostgreSQL: the audit store's tests look for initdb on PATH or in Debian's
# versioned directory.
if command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  say "postgresql: present"
else
  apt_install postgresql
fi

# HAProxy: the cluster target runs docs/deploy/haproxy.cfg with it.
if command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ]; then
  say "haproxy: present"
else
  apt_install haproxy
fi

# Node.js and npm.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  apt_install nodejs npm
fi
node_major=$(node -p 'process.versions.node.split(".")[0]')
[ "$node_major" -ge "$NODE_MIN_MAJOR" ] ||
  die "node $(node --version) is too old: the conformance suite needs Node $NODE_MIN_MAJOR+ (install a newer nodejs)"
say "node $(node --version), npm $(npm --version): present"

# The conformance suite, exactly as the lockfile pins it. npm writes
# node_modules/.package-lock.json on install: newer than the lockfile means
# the install is current.
installed=$CONFORMANCE_DIR/node_modules/.package-lock.json
if [ -x "$CONFORMANCE_DIR/node_modules/.bin/conformance" ] && [ "$installed" -nt "$CONFORMANCE_DIR/package-lock.json" ]; then
  say "conformance suite: installed ($CONFORMANCE_DIR)"
else
  say "npm ci in $CONFORMANCE_DIR"
  (cd "$CONFORMANCE_DIR" && npm ci --no-audit --no-fund --loglevel=error) || die "npm ci in $CONFORMANCE_DIR failed"
fi

# The official TypeScript SDK client of the stale-session specs
# (tools/tsclient), the same way. The spec installs it itself when missing.
TSCLIENT_DIR=tools/tsclient
if [ -f "$TSCLIENT_DIR/node_modules/@modelcontextprotocol/sdk/package.json" ] && [ "$TSCLIENT_DIR/node_modules/.package-lock.json" -nt "$TSCLIENT_DIR/package-lock.json" ]; then
  say "typescript sdk client: installed ($TSCLIENT_DIR)"
else
  say "npm ci in $TSCLIENT_DIR"
  (cd "$TSCLIENT_DIR" && npm ci --no-audit --no-fund --loglevel=error) || die "npm ci in $TSCLIENT_DIR failed"
fi

# Two public MCP proxies the thirdparty specs judge (tools/thirdparty), the
# same way.
THIRDPARTY_DIR=tools/thirdparty
if [ -x "$THIRDPARTY_DIR/node_modules/.bin/supergateway" ] && [ -x "$THIRDPARTY_DIR/node_modules/.bin/mcp-proxy" ] && [ "$THIRDPARTY_DIR/node_modules/.package-lock.json" -nt "$THIRDPARTY_DIR/package-lock.json" ]; then
  say "third-party proxies: installed ($THIRDPARTY_DIR)"
else
  say "npm ci in $THIRDPARTY_DIR"
  (cd "$THIRDPARTY_DIR" && npm ci --no-audit --no-fund --loglevel=error) || die "npm ci in $THIRDPARTY_DIR failed"
fi

go mod download
say "ready"
