#!/usr/bin/env bash
# scripts/docker.sh start|stop|status — a Docker daemon for the container specs.
#
#   start   use a working Docker if `docker info` succeeds; otherwise (as root on
#           Debian) install docker.io if missing and start a dockerd of our own:
#           --iptables=false --ip6tables=false, its own --data-root/--exec-root,
#           listening on unix:///var/run/docker.sock, default bridge kept. Waits
#           (bounded) until `docker info` works and records the daemon's pid.
#           Prints "docker: started" or "docker: already running" as its last line.
#   stop    stops only a dockerd that `start` started (by its recorded pid);
#           a daemon it did not start is left alone.
#   status  exit 0 when `docker info` works.
#
# Where neither a working Docker nor a way to start one exists, start fails with
# a message saying why and what to do. See DESIGN.md, "The machine".
set -euo pipefail

STATE=${MCPCHAOS_DOCKER_STATE:-/var/lib/mcpchaos-docker}
DATA_ROOT=$STATE/data
EXEC_ROOT=$STATE/exec
PIDFILE=$STATE/dockerd.pid
LOG=$STATE/dockerd.log
SOCK=/var/run/docker.sock
WAIT_S=${MCPCHAOS_DOCKER_WAIT_S:-60}   # start: until `docker info` works
STOP_S=${MCPCHAOS_DOCKER_STOP_S:-30}   # stop: SIGTERM, then SIGKILL after this

say() { echo "docker: $*"; }
die() { echo "docker: $*" >&2; exit 1; }

docker_ok() { command -v docker >/dev/null 2>&1 && timeout 10 docker info >/dev/null 2>&1; }

# our_pid prints the recorded pid if that process is still the dockerd we started.
our_pid() {
  [ -f "$PIDFILE" ] || return 1
  local pid
  pid=$(cat "$PIDFILE")
  [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "dockerd.*--data-root $DATA_ROOT" || return 1
  echo "$pid"
}

install_docker() {
  command -v dockerd >/dev/null 2>&1 && return 0
  [ "$(id -u)" = 0 ] || die "Docker is not available: 'docker info' fails, dockerd is not installed, and installing it needs root (run: sudo apt-get install -y docker.io, or start Docker yourself)"
  command -v apt-get >/dev/null 2>&1 || die "Docker is not available: 'docker info' fails and there is no apt-get to install docker.io (install and start Docker yourself)"
  say "installing docker.io"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq || die "apt-get update failed; cannot install docker.io"
  apt-get install -y -qq docker.io >/dev/null || die "apt-get install -y docker.io failed"
  command -v dockerd >/dev/null 2>&1 || die "docker.io installed but dockerd is not on PATH"
}

start() {
  if docker_ok; then
    say "already running ($(docker info --format '{{.ServerVersion}}' 2>/dev/null || echo '?'))"
    return 0
  fi
  if pid=$(our_pid); then
    die "our dockerd (pid $pid) runs but 'docker info' fails; see $LOG, or run: $0 stop"
  fi
  install_docker
  command -v docker >/dev/null 2>&1 || die "dockerd is installed but the docker CLI is not on PATH"
  [ "$(id -u)" = 0 ] || die "Docker is not available: 'docker info' fails and starting dockerd needs root"
  if [ -S "$SOCK" ] && ! docker_ok; then
    # A socket nobody answers on (a daemon that died): dockerd refuses to
    # start over it only if it is live, so a stale one is removed.
    if ! timeout 2 docker -H "unix://$SOCK" version >/dev/null 2>&1; then
      rm -f "$SOCK"
    fi
  fi
  mkdir -p "$DATA_ROOT" "$EXEC_ROOT"
  say "starting dockerd (data-root $DATA_ROOT, log $LOG)"
  # setsid: the daemon outlives this script and is not in its process group.
  setsid dockerd --iptables=false --ip6tables=false \
    --data-root "$DATA_ROOT" --exec-root "$EXEC_ROOT" \
    --pidfile "$PIDFILE" \
    -H "unix://$SOCK" >"$LOG" 2>&1 </dev/null &
  local bg=$!
  local deadline=$((SECONDS + WAIT_S))
  until docker_ok; do
    if ! kill -0 "$bg" 2>/dev/null; then
      die "dockerd exited during start; last lines of $LOG:
$(tail -n 20 "$LOG")"
    fi
    if [ $SECONDS -ge $deadline ]; then
      [ -f "$PIDFILE" ] || echo "$bg" >"$PIDFILE"
      stop >/dev/null 2>&1 || true
      die "dockerd did not answer 'docker info' within ${WAIT_S}s; last lines of $LOG:
$(tail -n 20 "$LOG")"
    fi
    sleep 0.5
  done
  [ -f "$PIDFILE" ] || echo "$bg" >"$PIDFILE"
  say "started (pid $(cat "$PIDFILE"), $(docker info --format '{{.ServerVersion}}' 2>/dev/null || echo '?'))"
}

stop() {
  local pid
  if ! pid=$(our_pid); then
    rm -f "$PIDFILE"
    say "nothing to stop (no dockerd started by $0 is running)"
    return 0
  fi
  say "stopping dockerd (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  local deadline=$((SECONDS + STOP_S))
  while kill -0 "$pid" 2>/dev/null; do
    if [ $SECONDS -ge $deadline ]; then
      say "dockerd (pid $pid) did not stop within ${STOP_S}s; killing it"
      kill -KILL "$pid" 2>/dev/null || true
      break
    fi
    sleep 0.2
  done
  rm -f "$PIDFILE"
  say "stopped"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) docker_ok ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
