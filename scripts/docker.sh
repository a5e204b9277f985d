#!/usr/bin/env bash
# scripts/docker.sh start|stop|status — a Docker daemon for the container specs.
#
#   start   use a working Docker if `docker info` succeeds; otherwise (as root on
#           Debian) install docker.io if missing and start a dockerd of our own:
#           --iptables=false --ip6tables=false, its own --data-root/--exec-root,
#           listening on unix:///var/run/docker.sock, default bridge kept. Waits
#           (bounded) until `docker info` works and records the daemon's pid.
#           Prints "docker: started", "docker: shared" or "docker: already
#           running" as its last line. When the daemon is ours (started now, or
#           by an earlier start), the caller is recorded as one of its users
#           (see USERS below); "shared" says that other users of it are alive,
#           so the caller shares it and calls stop when done like they do (the
#           last user's stop stops it). "already running" is a daemon that is
#           not ours, or ours with no live user (a leftover, or one started by
#           hand from a shell that is gone): leave it alone.
#   stop    stops only a dockerd that `start` started (by its recorded pid),
#           and only when no other user of it is left: the caller is taken off
#           the users, users whose process is gone are dropped, and while one
#           remains the daemon is left running for it (two suite runs share
#           one daemon: the first to end must not stop it under the other).
#           A daemon it did not start is left alone.
#   status  exit 0 when `docker info` works.
#
# USERS: the caller is the process that runs this script ($PPID: the test.sh
# or the test binary that calls start and later stop), or
# MCPCHAOS_DOCKER_USER=PID. A user is a file $STATE/users/PID holding that
# process's start time (so a reused pid is not taken for it). start and stop
# hold $STATE/lock (flock), so that a start never meets a stop halfway.
#
# Where neither a working Docker nor a way to start one exists, start fails with
# a message saying why and what to do. See docs/targets.md, "Containers".
set -euo pipefail

STATE=${MCPCHAOS_DOCKER_STATE:-/var/lib/mcpchaos-docker}
DATA_ROOT=$STATE/data
EXEC_ROOT=$STATE/exec
PIDFILE=$STATE/dockerd.pid
LOG=$STATE/dockerd.log
USERS=$STATE/users
LOCK=$STATE/lock
SOCK=${MCPCHAOS_DOCKER_SOCK:-/var/run/docker.sock}
ME=${MCPCHAOS_DOCKER_USER:-$PPID}
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

# started_at prints the start time of process $1 (field 22 of its stat, read
# after the command name, which may hold spaces), or fails when it is gone.
started_at() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat=${stat##*) }
  set -- $stat
  echo "${20}"
}

add_user() {
  local t
  t=$(started_at "$ME") || return 0
  mkdir -p "$USERS" && echo "$t" >"$USERS/$ME"
}

# other_users drops the caller and every user whose process is gone, and
# prints the pids of the users left.
other_users() {
  rm -f "$USERS/$ME"
  local f pid
  for f in "$USERS"/*; do
    [ -f "$f" ] || continue
    pid=${f##*/}
    if [ "$(started_at "$pid" 2>/dev/null)" = "$(cat "$f")" ]; then
      echo "$pid"
    else
      rm -f "$f"
    fi
  done
}

# lock takes $STATE/lock for the rest of the script (best effort: a caller
# that cannot write $STATE has no daemon of ours to share either).
LOCKED=""
lock() {
  [ -z "$LOCKED" ] || return 0
  LOCKED=1
  mkdir -p "$STATE" 2>/dev/null && exec 9>>"$LOCK" || return 0
  command -v flock >/dev/null 2>&1 || return 0
  flock -w $((WAIT_S + STOP_S + 30)) 9 || die "another $0 holds $LOCK for too long"
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
  lock
  if docker_ok; then
    local pid others
    if pid=$(our_pid); then
      others=$(other_users | tr '\n' ' ')
      add_user
      if [ -n "$others" ]; then
        say "shared (pid $pid, also used by pid ${others% })"
        return 0
      fi
    fi
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
  # setsid: the daemon outlives this script and is not in its process group;
  # 9>&-: nor does it hold our lock.
  setsid dockerd --iptables=false --ip6tables=false \
    --data-root "$DATA_ROOT" --exec-root "$EXEC_ROOT" \
    --pidfile "$PIDFILE" \
    -H "unix://$SOCK" >"$LOG" 2>&1 </dev/null 9>&- &
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
  rm -rf "$USERS"
  add_user
  say "started (pid $(cat "$PIDFILE"), $(docker info --format '{{.ServerVersion}}' 2>/dev/null || echo '?'))"
}

stop() {
  lock
  local pid others
  if ! pid=$(our_pid); then
    rm -f "$PIDFILE"
    rm -rf "$USERS"
    say "nothing to stop (no dockerd started by $0 is running)"
    return 0
  fi
  others=$(other_users | tr '\n' ' ')
  if [ -n "$others" ]; then
    say "left running (pid $pid): still used by pid ${others% }"
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
  rm -rf "$USERS"
  say "stopped"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) docker_ok ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
