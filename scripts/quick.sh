#!/usr/bin/env bash
# make quick: the day-to-day loop over what changed since the merge base with
# QUICK_BASE (default main), committed or not. gofmt and go vet on the changed
# packages; their go tests; the check of every known mutant of the changed
# code (`mcpchaos mutants --touching`: its go tests, and its Ginkgo and
# catalogue specs as one label filter); the Ginkgo specs of changed spec
# files (--focus-file). No race detector, no containers, no conformance:
# make test runs those.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
GINKGO=("$GO" run github.com/onsi/ginkgo/v2/ginkgo)
base_ref=${QUICK_BASE:-main}
base=$(git merge-base HEAD "$base_ref" 2>/dev/null || git rev-parse HEAD)

mapfile -t files < <({ git diff --name-only "$base"; git ls-files --others --exclude-standard; } |
	grep '\.go$' | sort -u | while read -r f; do [ -f "$f" ] && echo "$f"; done)
if [ ${#files[@]} -eq 0 ]; then
	echo "quick: no Go file changed since $base_ref"
	exit 0
fi
dirs=$(printf '%s\n' "${files[@]}" | xargs -n1 dirname | sort -u)
echo "quick: changed since $base_ref: $(echo $dirs)"

out=$(gofmt -l "${files[@]}")
if [ -n "$out" ]; then echo "not gofmt'ed:"; echo "$out"; exit 1; fi

pkgs=$(for d in $dirs; do echo "./$d"; done)
# shellcheck disable=SC2086
$GO vet $pkgs

# Ginkgo suites (packages whose tests call RunSpecs) run through Ginkgo below.
unit=() suites=()
for d in $dirs; do
	if grep -qsE '^[[:space:]]*RunSpecs[(]' "$d"/*_test.go; then suites+=("$d"); else unit+=("./$d"); fi
done
[ ${#unit[@]} -eq 0 ] || $GO test -count=1 "${unit[@]}"

plan=$($GO run ./cmd/mcpchaos mutants --touching "$(echo $dirs | tr ' ' ,)")
labels=""
while read -r kind a b; do
	case $kind in
	test)
		# A package already tested in full needs no second run.
		if ! printf '%s\n' "${unit[@]}" | grep -qx -- "$a"; then $GO test -count=1 "$a" -run "$b"; fi ;;
	labels) labels=$a${b:+ $b} ;;
	esac
done <<<"$plan"

run_ginkgo() { "${GINKGO[@]}" --no-color "$@" ./scenarios; }
if [ -n "$labels" ]; then
	echo "quick: the scenarios of the changed code's mutants: $labels"
	run_ginkgo --label-filter="($labels) && !container && !conformance"
fi
specs=()
for f in "${files[@]}"; do
	case $f in scenarios/*_test.go) [ "$(dirname "$f")" = scenarios ] && specs+=("--focus-file=$(basename "$f")") ;; esac
done
if [ ${#specs[@]} -gt 0 ]; then
	echo "quick: the specs of the changed spec files"
	run_ginkgo --label-filter='!container && !conformance' "${specs[@]}"
fi
for s in "${suites[@]}"; do
	[ "$s" = scenarios ] || "${GINKGO[@]}" --no-color --label-filter='!container && !conformance' "./$s"
done
echo "quick: ok"
