#!/usr/bin/env bash
# scripts/test.sh — `make test` on any machine: set up (scripts/deps.sh), make
# sure a Docker daemon answers for the container specs (scripts/docker.sh), run
# the checks (`make check`: lint, unit tests, Ginkgo suites), and on exit stop
# the Docker daemon only if this run started it or shares it with another run
# (docker.sh start said "shared"; docker.sh stop then stops it only once the
# last of its users is done). A daemon that was already running with no other
# run on it (yours, or one a previous run left) is left alone.
#
#   scripts/test.sh [MAKE ARGS...]   extra arguments go to `make check`
#   SUITE_PROCS=N scripts/test.sh     N suite processes, not measured
set -euo pipefail
cd "$(dirname "$0")/.."
MAKE=${MAKE:-make}

# The suites' process count follows the machine's idle cores, measured
# before this run loads it (scripts/suite-procs.sh); SUITE_PROCS set by the
# caller (or .ci/run, which measures before its gates start) is kept.
if [ -z "${SUITE_PROCS:-}" ]; then
  SUITE_PROCS=$(scripts/suite-procs.sh)
  export SUITE_PROCS
fi
echo "make test: SUITE_PROCS=$SUITE_PROCS"

scripts/deps.sh

# Whether a daemon answered before this run decides whether we stop one at
# the end; docker.sh stop only ever stops a dockerd docker.sh started.
ours=""
scripts/docker.sh status || ours=1
stop_docker() {
  if [ -n "$ours" ]; then
    MCPCHAOS_DOCKER_USER=$$ scripts/docker.sh stop || true
  fi
}
trap stop_docker EXIT
trap 'exit 130' INT TERM HUP
# This run is the daemon's user (not exported: the test binaries under make
# check are users of their own).
started=$(MCPCHAOS_DOCKER_USER=$$ scripts/docker.sh start)
echo "$started"
case $(echo "$started" | tail -n 1) in
  "docker: shared"*) ours=1 ;;
esac

"$MAKE" check "$@"
