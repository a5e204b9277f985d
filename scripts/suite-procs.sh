#!/usr/bin/env bash
# scripts/suite-procs.sh — how many Ginkgo processes the suites should use on
# this machine now: 4 when at least half its cores are idle, 2 when other
# work already keeps more than half of them busy.
#
# Why: the suites' specs mostly wait, so four processes finish them sooner on
# a quiet machine; on a busy one, four race-built processes add their own run
# queue to the machine's, and a proxy's CPU-bound work (parsing a 256 KiB
# request, a race build) is stretched by the run queue further than the stall
# meter sees (it measures how late a sleeping goroutine wakes, and the
# scheduler wakes sleepers first). Fewer processes make a busy machine's run
# slower, not red (docs/ci.md).
#
#   scripts/suite-procs.sh                      samples /proc/stat over 2 s
#   scripts/suite-procs.sh --from BEFORE AFTER  two saved copies of /proc/stat
#
# Prints the number on stdout and the measured idle cores on stderr.
set -euo pipefail

# cpu_line FILE: the aggregate "cpu" line's idle+iowait and total jiffies.
cpu_line() {
  awk '$1 == "cpu" { idle = $5 + $6; total = 0; for (i = 2; i <= NF; i++) total += $i; print idle, total; exit }' "$1"
}

if [ "${1:-}" = "--from" ]; then
  [ $# -eq 3 ] || { echo "usage: $0 [--from BEFORE AFTER]" >&2; exit 2; }
  before=$2 after=$3
else
  [ $# -eq 0 ] || { echo "usage: $0 [--from BEFORE AFTER]" >&2; exit 2; }
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  cp /proc/stat "$tmp/before"
  sleep 2
  cp /proc/stat "$tmp/after"
  before=$tmp/before after=$tmp/after
fi

read -r idle0 total0 < <(cpu_line "$before")
read -r idle1 total1 < <(cpu_line "$after")
cores=$(grep -c '^cpu[0-9]' "$after")
if [ -z "${idle0:-}" ] || [ -z "${idle1:-}" ] || [ "$total1" -le "$total0" ] || [ "$cores" -lt 1 ]; then
  echo "suite-procs: cannot read the CPU times; using 4" >&2
  echo 4
  exit 0
fi
# idle cores, in hundredths: the idle share of the interval times the cores.
idle100=$(( (idle1 - idle0) * 100 * cores / (total1 - total0) ))
printf 'suite-procs: %d.%02d of %d cores idle\n' $((idle100 / 100)) $((idle100 % 100)) "$cores" >&2
if [ $((idle100 * 2)) -ge $((cores * 100)) ]; then
  echo 4
else
  echo 2
fi
