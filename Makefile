# mcpchaos — make targets. `make test` is what CI runs; `make run` is the main job.
GO      ?= go
GINKGO  := $(GO) run github.com/onsi/ginkgo/v2/ginkgo
REPORTS ?= reports
# Ginkgo suites are the packages whose tests call RunSpecs; the rest are plain go tests.
RUNSPECS := RunSpecs[(]
SUITES  := $(sort $(dir $(shell grep -rlE --include='*_test.go' '$(RUNSPECS)' proxy fakes scenarios cmd smoke 2>/dev/null)))
SUITE_PKGS := $(patsubst %/,./%,$(SUITES))
UNIT_PKGS  := $(filter-out $(patsubst %/,github.com/mcpchaos/mcpchaos/%,$(SUITES)),$(shell $(GO) list ./...))

.PHONY: all build test unit suites lint run clean

all: build

build:
	$(GO) build -o bin/ ./cmd/mcplocal ./cmd/mcpchaos ./cmd/mcpctl

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "not gofmt'ed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

unit:
	$(GO) test -race -count=1 $(UNIT_PKGS)

suites:
	@mkdir -p $(REPORTS)
	$(GINKGO) run --race --randomize-all --fail-on-pending --fail-on-empty \
		--junit-report=junit.xml --output-dir=$(REPORTS) $(SUITE_PKGS)

test: lint unit suites

run:
	$(GO) run ./cmd/mcpchaos run

clean:
	rm -rf bin $(REPORTS)
