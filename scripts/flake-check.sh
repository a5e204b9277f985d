#!/usr/bin/env bash
# scripts/flake-check.sh — run the Ginkgo suites again and again and name every
# spec that failed, with the seed that replays it.
#
#   FLAKE_RUNS=N          quiet runs (default 20), each with a seed of its own
#   FLAKE_STRESS_RUNS=M   runs under CPU load (default 1): one busy loop per core
#                         runs beside the suites, started and ended by this
#                         script (by pid), never longer than the run itself
#   FLAKE_SEED=S          first seed (default: the clock); run i uses S+i
#   FLAKE_PKGS="..."      the suites (default: ./scenarios ./smoke ./fakes/llm)
#   FLAKE_LABELS=...      Ginkgo label filter (default: !container — no Docker)
#   FLAKE_RUN_TIMEOUT=D   ginkgo --timeout of one run (default 15m)
#   FLAKE_DIR=dir         where the JUnit reports go (default reports/flake)
#   FLAKE_UNIT_PKGS="..." plain go test packages (default none; make flake-check
#                         passes the ones make unit runs): before the suites, each
#                         of their tests runs FLAKE_RUNS times (go test -race
#                         -count=N -shuffle=S) and each failed run is listed
#
# Every run is race-enabled and randomized (--randomize-all) and keeps going
# past a failing suite (--keep-going), so one flake does not hide the next.
# A timing slip in a plain test fails CI as surely as one in a spec (a
# listener test once measured its clock from after the dial, 1 ms late):
# the unit phase repeats those tests too.
# ginkgo --repeat is not used: it stops at the first failure, which hides the
# rate we measure. The last line is "flake-check: R runs × S specs, F failures";
# each failure is listed above it as "seed S (quiet|stress): <suite> <spec>",
# and `ginkgo --seed=S` replays its order. Exit 1 when any spec failed.
set -uo pipefail

RUNS=${FLAKE_RUNS:-20}
STRESS_RUNS=${FLAKE_STRESS_RUNS:-1}
SEED=${FLAKE_SEED:-}
SEED=${SEED:-$(date +%s)}
PKGS=${FLAKE_PKGS:-./scenarios ./smoke ./fakes/llm}
LABELS=${FLAKE_LABELS:-!container}
RUN_TIMEOUT=${FLAKE_RUN_TIMEOUT:-15m}
DIR=${FLAKE_DIR:-reports/flake}
UNIT_PKGS=${FLAKE_UNIT_PKGS:-}
GO=${GO:-go}

mkdir -p "$DIR"
rm -f "$DIR"/run-*.xml "$DIR"/run-*.log "$DIR"/unit.json "$DIR"/unit.log

load_pids=()
stop_load() {
	for p in "${load_pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${load_pids[@]}"; do wait "$p" 2>/dev/null; done
	load_pids=()
}
trap stop_load EXIT
trap 'exit 130' INT TERM

start_load() {
	local n
	n=$(nproc 2>/dev/null || echo 2)
	for _ in $(seq "$n"); do
		( while :; do :; done ) &
		load_pids+=("$!")
	done
}

failures=0 specs=0 runs=0 report=""
# record WHO FAILED RC WHAT: one report line per failed spec or test in
# FAILED (one per line), or one for a non-zero exit that named none.
record() {
	local who=$1 failed=$2 rc=$3 what=$4 line
	if [ -n "$failed" ]; then
		while IFS= read -r line; do
			report+="$who: $line"$'\n'
			failures=$((failures + 1))
		done <<<"$failed"
	elif [ "$rc" -ne 0 ]; then
		report+="$who: exit $rc with no failed $what"$'\n'
		failures=$((failures + 1))
	fi
}
run_one() { # run_one INDEX SEED MODE
	local i=$1 seed=$2 mode=$3 xml="run-$1.xml"
	[ "$mode" = stress ] && start_load
	$GO run github.com/onsi/ginkgo/v2/ginkgo run --race --randomize-all --keep-going \
		--seed="$seed" --timeout="$RUN_TIMEOUT" --label-filter="$LABELS" \
		--junit-report="$xml" --output-dir="$DIR" $PKGS >"$DIR/run-$i.log" 2>&1
	local rc=$?
	[ "$mode" = stress ] && stop_load
	runs=$((runs + 1))
	if [ ! -s "$DIR/$xml" ]; then
		echo "flake-check: run $i (seed $seed, $mode) wrote no report (exit $rc); see $DIR/run-$i.log"
		failures=$((failures + 1))
		report+="seed $seed ($mode): no report, exit $rc (build failure or timeout?)"$'\n'
		return
	fi
	local n f
	# Specs that ran (skipped ones do not count) and the ones that failed.
	n=$(grep '<testcase ' "$DIR/$xml" | grep -cv 'status="skipped"\|status="pending"')
	specs=$((specs + n))
	f=$(grep '<testcase ' "$DIR/$xml" | grep -E 'status="(failed|panicked|timedout|interrupted|aborted)"' |
		sed -E 's/.*name="([^"]*)" classname="([^"]*)".*/\2 \1/' |
		sed -e "s/&#39;/'/g" -e 's/&quot;/"/g' -e 's/&lt;/</g' -e 's/&gt;/>/g' -e 's/&amp;/\&/g')
	record "seed $seed ($mode)" "$f" "$rc" "spec; see $DIR/run-$i.log"
	echo "flake-check: run $i seed $seed ($mode): $n specs, exit $rc"
}

unit_tests=0
run_unit() { # the plain tests, each RUNS times in one go test
	[ -n "$UNIT_PKGS" ] && [ "$RUNS" -gt 0 ] || return 0
	# shellcheck disable=SC2086 # a list of packages
	$GO test -race -count="$RUNS" -shuffle="$SEED" -json $UNIT_PKGS >"$DIR/unit.json" 2>"$DIR/unit.log"
	local rc=$? f
	# One JSON event per test run that ended; subtests count as tests.
	unit_tests=$(grep -cE '"Action":"(pass|fail)","Package":"[^"]*","Test":' "$DIR/unit.json")
	f=$(grep -E '"Action":"fail","Package":"[^"]*","Test":' "$DIR/unit.json" |
		sed -E 's/.*"Package":"([^"]*)","Test":"([^"]*)".*/\1 \2/' | sort | uniq -c |
		sed -E 's/^ *([0-9]+) (.*)/\2 (failed \1 of '"$RUNS"')/')
	# A package that failed with no failed test (its binary timed out or
	# panicked, or it did not build) is a failure of its own: listed even
	# when other packages' tests failed.
	local pkg
	for pkg in $(grep -E '"Action":"fail","Package":"[^"]*","Elapsed"' "$DIR/unit.json" |
		sed -E 's/.*"Package":"([^"]*)".*/\1/' | sort -u); do
		grep -qE '"Action":"fail","Package":"'"$pkg"'","Test":' "$DIR/unit.json" ||
			f+="${f:+$'\n'}$pkg (failed with no failed test: a timeout, a panic or a build failure; see $DIR/unit.json)"
	done
	record "seed $SEED (unit)" "$f" "$rc" "test; see $DIR/unit.log and $DIR/unit.json"
	echo "flake-check: unit tests, $RUNS runs each, seed $SEED: $unit_tests test runs, exit $rc"
}

run_unit
i=0
for _ in $(seq "$RUNS"); do run_one "$i" $((SEED + i)) quiet; i=$((i + 1)); done
for _ in $(seq "$STRESS_RUNS"); do run_one "$i" $((SEED + i)) stress; i=$((i + 1)); done

printf '%s' "$report"
[ -n "$UNIT_PKGS" ] && echo "flake-check: unit: $unit_tests test runs ($RUNS × each test)"
echo "flake-check: $runs runs × $((runs > 0 ? specs / runs : 0)) specs ($specs in all), $failures failures"
[ "$failures" -eq 0 ]
