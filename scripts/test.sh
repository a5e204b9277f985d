#!/usr/bin/env bash
# scripts/test.sh — `make test` on any machine: set up (scripts/deps.sh), make
# sure a Docker daemon answers for the container specs (scripts/docker.sh), run
# the checks (`make check`: lint, unit tests, Ginkgo suites), and on exit stop
# the Docker daemon only if this run started it. A daemon that was already
# running (yours, or one a previous run left) is left alone.
#
#   scripts/test.sh [MAKE ARGS...]   extra arguments go to `make check`
set -euo pipefail
cd "$(dirname "$0")/.."
MAKE=${MAKE:-make}

scripts/deps.sh

# Whether a daemon answered before this run decides whether we stop one at
# the end; docker.sh stop only ever stops a dockerd docker.sh started.
ours=""
scripts/docker.sh status || ours=1
stop_docker() {
  if [ -n "$ours" ]; then
    scripts/docker.sh stop || true
  fi
}
trap stop_docker EXIT
trap 'exit 130' INT TERM HUP
scripts/docker.sh start

"$MAKE" check "$@"
