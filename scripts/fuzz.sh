#!/usr/bin/env bash
# scripts/fuzz.sh — `make fuzz`: fuzz each target for a while, in runs
# bounded by a count of executions, never by a duration.
#
#   FUZZ_TARGETS="PKG:TARGET ..."  the targets (the Makefile's list)
#   FUZZTIME=D     how long each target is fuzzed in all: N, Ns, Nm or Nh
#                  (default 5m; 0 runs each target once)
#   FUZZ_CHUNK=Nx  executions per run (default 200000x)
#
# Go before 1.27 can fail a duration-bounded run (-fuzztime=5m) with a bare
# "context deadline exceeded" at its boundary when a loaded machine starves
# its workers (golang/go#75804); a count sets no deadline. So each target
# runs count-bounded runs back to back until FUZZTIME has passed (the last
# may end past it by one run). Each run starts from the corpus the earlier
# ones grew (Go keeps it in its fuzz cache), so together they fuzz as one
# long run would. A failing input stops everything (exit 1); go test saves
# it under the package's testdata/fuzz/TARGET/, where plain go test replays it.
set -uo pipefail

GO=${GO:-go}
TARGETS=${FUZZ_TARGETS:-}
TIME=${FUZZTIME:-5m}
CHUNK=${FUZZ_CHUNK:-200000x}

# now_ms is the wall clock in milliseconds: bash's SECONDS counts whole
# clock seconds, so a run of 0.4 s that crosses a second boundary would
# already read as one second spent.
now_ms() { date +%s%3N; }

# seconds prints D (N, Ns, Nm or Nh) in seconds; it fails on anything else.
seconds() {
	local n=$1 mult=1
	case $n in
	*h) n=${n%h} mult=3600 ;;
	*m) n=${n%m} mult=60 ;;
	*s) n=${n%s} ;;
	esac
	case $n in
	'' | *[!0-9]*) return 1 ;;
	esac
	echo $((10#$n * mult))
}

if [ -z "$TARGETS" ]; then
	echo "fuzz: FUZZ_TARGETS is empty: want PKG:TARGET ..." >&2
	exit 2
fi
if ! total=$(seconds "$TIME"); then
	echo "fuzz: FUZZTIME=$TIME: want N, Ns, Nm or Nh (e.g. 5m)" >&2
	exit 2
fi
case $CHUNK in
[0-9]*x) ;;
*)
	echo "fuzz: FUZZ_CHUNK=$CHUNK: want a count of executions, e.g. 200000x" >&2
	exit 2
	;;
esac

for t in $TARGETS; do
	pkg=${t%%:*} name=${t##*:}
	if [ "$pkg" = "$t" ] || [ -z "$name" ]; then
		echo "fuzz: target $t: want PKG:TARGET" >&2
		exit 2
	fi
	start=$(now_ms) runs=0
	while :; do
		runs=$((runs + 1))
		echo "fuzz: $name ($pkg): run $runs of $CHUNK, $((($(now_ms) - start) / 1000))s of ${total}s spent"
		if ! "$GO" test -run '^$' -fuzz="^${name}\$" -fuzztime="$CHUNK" "$pkg"; then
			echo "fuzz: $name failed in run $runs; the failing input is under $pkg/testdata/fuzz/$name/" >&2
			exit 1
		fi
		if (($(now_ms) - start >= total * 1000)); then
			break
		fi
	done
	echo "fuzz: $name: $runs run(s) of $CHUNK in $((($(now_ms) - start) / 1000))s, no failing input"
done
