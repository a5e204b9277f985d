# mcpchaos — make targets. `make test` is what CI runs; `make run` is the main job.
GO      ?= go
GINKGO  := $(GO) run github.com/onsi/ginkgo/v2/ginkgo
REPORTS ?= reports
# Ginkgo suites are the packages whose tests call RunSpecs (a line of code
# that starts with the call, not a fixture that mentions it in a string);
# the rest are plain go tests.
RUNSPECS := ^[[:space:]]*RunSpecs[(]
SUITES  := $(sort $(dir $(shell grep -rlE --include='*_test.go' '$(RUNSPECS)' proxy fakes scenarios cmd smoke 2>/dev/null)))
SUITE_PKGS := $(patsubst %/,./%,$(SUITES))
UNIT_PKGS  := $(filter-out $(patsubst %/,github.com/mcpchaos/mcpchaos/%,$(SUITES)),$(shell $(GO) list ./...))

# -trimpath: what is built does not depend on the directory of the clone, so
# a fresh clone (as CI makes) reuses the build cache another clone filled,
# and a release binary carries no path of the machine that built it.
export GOFLAGS := $(strip $(filter-out -trimpath,$(GOFLAGS)) -trimpath)

.PHONY: all build test check quick deps unit suites lint run smoke clean mutants conformance bench flake-check mutants-generic fuzz fuzz-short

all: build

build:
	$(GO) build -o bin/ ./cmd/mcplocal ./cmd/mcpchaos ./cmd/mcpctl

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "not gofmt'ed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@$(GO) mod tidy -diff >/dev/null || { echo "go.mod/go.sum are not tidy: run 'go mod tidy'"; $(GO) mod tidy -diff; exit 1; }

unit:
	$(GO) test -race -count=1 $(UNIT_PKGS)

# SUITE_PROCS Ginkgo processes share each suite's specs: the specs mostly
# wait (a fault's latency, a budget running out, a proxy's restart), so four
# processes on 2 cores keep about one core busy and finish the scenarios
# suite in 7 minutes instead of 11 with two (docs/ci.md).
# make test (and .ci/run) measure the machine first and set it to 2 when
# other work keeps more than half the cores busy (scripts/suite-procs.sh).
# Serial specs (the load and soak bounds) still run alone, after the rest;
# an Ordered container (a foreign proxy's catalogue run) stays on one
# process. The suites build everything once, in SynchronizedBeforeSuite.
SUITE_PROCS ?= 4

suites:
	@mkdir -p $(REPORTS)
	$(GINKGO) run --race --randomize-all --fail-on-pending --fail-on-empty --procs=$(SUITE_PROCS) \
		--junit-report=junit.xml --output-dir=$(REPORTS) $(SUITE_PKGS)

# make test sets up what it needs first (make deps; a Docker daemon for the
# container specs, stopped afterwards only if this run started it), then runs
# make check. See scripts/test.sh.
test:
	scripts/test.sh

# The day-to-day loop (about 2 minutes): gofmt, vet and the go tests of the
# packages changed since main (QUICK_BASE=ref for another base), the checks
# of their known mutants, the specs of changed spec files. See scripts/quick.sh.
quick:
	QUICK_BASE=$(or $(QUICK_BASE),main) GO=$(GO) bash scripts/quick.sh

# The checks themselves, on a machine already set up.
check: lint unit suites fuzz-short

# Idempotent set-up for make test: PostgreSQL's server binaries, Node.js/npm,
# the pinned conformance suite (npm ci in tools/conformance), the Go modules.
# make run needs none of it. See scripts/deps.sh.
deps:
	scripts/deps.sh

# The official MCP conformance suite against go-sdk's everything-server,
# directly and through mcplocal, under tools/conformance/baseline.yml
# (docs/conformance.md). MCPLOCAL=path holds a prebuilt mcplocal to it instead.
conformance: deps
	MCPCHAOS_CONFORMANCE_MCPLOCAL="$(MCPLOCAL)" $(GINKGO) run -v --label-filter=conformance ./scenarios/conformance

# Go native fuzz targets, PACKAGE:TARGET. `make test` runs each for
# FUZZ_SHORT; `make fuzz` for FUZZTIME each. Failing inputs land in the
# package's testdata/fuzz/TARGET/, where plain `go test` replays them.
# FUZZ_SHORT is a count of executions, not a duration: Go before 1.27 can
# fail a duration-bounded run with a bare "context deadline exceeded" at the
# boundary when a loaded machine starves its workers (golang/go#75804; CI
# met it on FuzzParse), and a count sets no deadline. 40000 is about 10 s of
# FuzzEntry and 4 s of FuzzParse here.
FUZZ_TARGETS := ./proxy/entry:FuzzEntry ./proxy/config:FuzzParse ./proxy/rpcread:FuzzReadingMatchesSDK
FUZZ_SHORT   ?= 40000x
FUZZTIME     ?= 5m

# Both go through scripts/fuzz.sh: fuzz-short is one run of FUZZ_SHORT per
# target; make fuzz runs count-bounded runs back to back until FUZZTIME has
# passed, for the same reason.
fuzz-short:
	FUZZ_TARGETS="$(FUZZ_TARGETS)" FUZZTIME=0 FUZZ_CHUNK=$(FUZZ_SHORT) GO=$(GO) bash scripts/fuzz.sh

fuzz:
	FUZZ_TARGETS="$(FUZZ_TARGETS)" FUZZTIME=$(FUZZTIME) GO=$(GO) bash scripts/fuzz.sh

run:
	$(GO) run ./cmd/mcpchaos run

# Every known regression as a mutant the suite must kill (scenarios/mutants):
# each patch applied to a copy of the module, its check run there. Slow
# (minutes); make test only checks that every patch still applies.
mutants:
	$(GO) run ./cmd/mcpchaos mutants

# Generic mutation testing (scenarios/mutants/generic*.go): every operator
# swapped, ! dropped and call removed in the packages, compiled into one
# schemata build, each mutant judged by the package tests and scenario specs
# that run its code. Prints every survivor and the score. Verdicts are kept
# in RESULTS, so an interrupted run resumes. proxy/audit/audittest is test
# support (only tests import it) and is left out. Over all of proxy/ with
# the scenarios: hours on 2 shared cores (see docs/mutants.md).
#   make mutants-generic [PKGS=proxy/trace,proxy/degrade] [RESULTS=file] [ARGS='--package-tests-only']
RESULTS ?= $(CURDIR)/.mutants-generic.jsonl
mutants-generic:
	pkgs="$(PKGS)"; [ -n "$$pkgs" ] || pkgs=$$($(GO) list ./proxy/... | sed 's|^github.com/mcpchaos/mcpchaos/||' | grep -v '^proxy/audit/audittest$$' | paste -sd, -); \
	$(GO) run ./cmd/mcpchaos mutants --generic "$$pkgs" --results "$(RESULTS)" $(ARGS)

# The smoke checks against a running proxy (a deployment): read-only tools
# only, fewer than 20 requests, no faults. Without URL they check a local
# mcplocal the suite starts itself.
#   make smoke URL=https://proxy [TOKEN=...] [PROJECT=docmost] [BUDGET=30s]
#              [READ_TOOL=docmost_search READ_ARGS='{"query":"x"}'] [LARGE_TOOL=... LARGE_ARGS='{...}']
# Values go through the environment, so the token is not echoed.
smoke: export MCPCHAOS_SMOKE_URL := $(or $(URL),$(MCPCHAOS_SMOKE_URL))
smoke: export MCPCHAOS_SMOKE_TOKEN := $(or $(TOKEN),$(MCPCHAOS_SMOKE_TOKEN))
smoke: export MCPCHAOS_SMOKE_PROJECT := $(or $(PROJECT),$(MCPCHAOS_SMOKE_PROJECT))
smoke: export MCPCHAOS_SMOKE_BUDGET := $(or $(BUDGET),$(MCPCHAOS_SMOKE_BUDGET))
smoke: export MCPCHAOS_SMOKE_READ_TOOL := $(or $(READ_TOOL),$(MCPCHAOS_SMOKE_READ_TOOL))
smoke: export MCPCHAOS_SMOKE_READ_ARGS := $(or $(READ_ARGS),$(MCPCHAOS_SMOKE_READ_ARGS))
smoke: export MCPCHAOS_SMOKE_LARGE_TOOL := $(or $(LARGE_TOOL),$(MCPCHAOS_SMOKE_LARGE_TOOL))
smoke: export MCPCHAOS_SMOKE_LARGE_ARGS := $(or $(LARGE_ARGS),$(MCPCHAOS_SMOKE_LARGE_ARGS))
smoke:
	$(GINKGO) run --label-filter=smoke ./smoke

# The upstream directly, mcplocal in front of it (and any other target),
# side by side: latency, throughput, RSS, memory per idle session
# (docs/performance.md). Pass flags with BENCH='--sessions 1,64,256 --json'.
bench:
	$(GO) run ./cmd/mcpchaos bench $(BENCH)

# The plain tests of make unit run RUNS times each (race on, shuffled), then
# the Ginkgo suites (containers left out) run RUNS times with race on and a
# seed each, then STRESS_RUNS more times beside one busy loop per core; every
# failed test or spec is listed with the seed that replays it
# (scripts/flake-check.sh).
#   make flake-check [RUNS=20] [STRESS_RUNS=1] [SEED=N]
flake-check:
	FLAKE_RUNS=$(or $(RUNS),20) FLAKE_STRESS_RUNS=$(or $(STRESS_RUNS),1) FLAKE_SEED=$(SEED) \
		FLAKE_UNIT_PKGS="$(UNIT_PKGS)" FLAKE_DIR=$(REPORTS)/flake GO=$(GO) bash scripts/flake-check.sh

clean:
	rm -rf bin $(REPORTS)

# The SDK-upgrade canary (docs/canary.md): the suite on mcplocal and the
# clients built with a candidate SDK and on go.mod's versions, side by side.
#   make canary SDK=github.com/modelcontextprotocol/go-sdk@v1.7.0
#   make canary SDK="github.com/modelcontextprotocol/go-sdk=/path/to/checkout github.com/mark3labs/mcp-go@v1.2.0"
#   make canary CLIENT_SDK=github.com/mark3labs/mcp-go@v1.2.0   (the proxy stays on go.mod's)
#   make canary SDK=... CANARY_FLAGS='--allow "NAME=reason" --label restart'
# Exit 1 when anything that passed on the baseline fails on the candidate.
.PHONY: canary canary-selftest
canary:
	@test -n "$(SDK)$(CLIENT_SDK)" || { echo 'make canary: give SDK=MODULE@VERSION (or MODULE=/path), and/or CLIENT_SDK=...'; exit 2; }
	$(GO) run ./cmd/mcpchaos canary $(foreach s,$(SDK),--sdk $(s)) $(foreach s,$(CLIENT_SDK),--client-sdk $(s)) \
		--report $(REPORTS)/canary $(CANARY_FLAGS)

# The canary's own proof (minutes): a go-sdk copy that ignores the server's
# session ids must fail the restart scenarios; an unpatched copy must change
# nothing. The unpatched one (the whole catalogue and specs, twice) runs
# beside the four short ones in turn, since both mostly wait on the proxies
# they drive. CI calls it from .ci/run.
canary-selftest:
	$(GO) test -tags canaryselftest -count=1 -timeout 60m -run '^TestCanarySelftest$$' -v ./cmd/mcpchaos
