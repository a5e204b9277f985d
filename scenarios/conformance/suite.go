package conformance

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// Version is the pinned version of @modelcontextprotocol/conformance
// (tools/conformance/package.json): the newest that runs on Node 20.
const Version = "0.1.13"

// RunTimeout bounds one run of the whole suite. The fixture passes all 30
// active scenarios in under 2 s here; through a proxy that never answers, the
// suite's client waits out its own request timeout per scenario, so the run is
// cut off and the scenarios it did not report count as NotRun.
const RunTimeout = 90 * time.Second

// Suite is the installed conformance package.
type Suite struct {
	// Dir holds package.json and node_modules (tools/conformance).
	Dir string
	// Timeout bounds one Run; 0 means RunTimeout.
	Timeout time.Duration
}

// Bin is the suite's executable inside Dir.
func (s Suite) Bin() string { return filepath.Join(s.Dir, "node_modules", ".bin", "conformance") }

// Check says whether the suite is installed, and how to install it if not.
func (s Suite) Check() error {
	if _, err := exec.LookPath("node"); err != nil {
		return errors.New("node is not on PATH: the conformance suite needs Node.js 20+ (run `make deps`, or apt-get install nodejs npm)")
	}
	if _, err := os.Stat(s.Bin()); err != nil {
		return fmt.Errorf("the conformance suite is not installed (%s missing): run `make deps` (it runs `npm ci` in %s)", s.Bin(), s.Dir)
	}
	return nil
}

// Run runs every active server scenario of the suite against url (a
// Streamable HTTP MCP endpoint) and returns its verdicts, with the reasons of
// failed checks. The run is bounded by Timeout; a run cut off early still
// returns what the suite reported, the rest as NotRun. An error means the
// suite could not be run or its output not read at all.
func (s Suite) Run(ctx context.Context, url string) (Result, error) {
	if err := s.Check(); err != nil {
		return Result{}, err
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = RunTimeout
	}
	outDir, err := os.MkdirTemp("", "mcpchaos-conformance-")
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(outDir)

	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, s.Bin(), "server", "--url", url, "-o", outDir)
	cmd.Dir = s.Dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "FORCE_COLOR=0")
	cmd.WaitDelay = 5 * time.Second // after a kill, stop waiting for its pipes
	out, runErr := cmd.CombinedOutput()
	text := string(out)

	r, complete, perr := Parse(text)
	if perr != nil {
		if runErr != nil {
			return Result{}, fmt.Errorf("conformance suite against %s: %v; %w", url, runErr, perr)
		}
		return Result{}, fmt.Errorf("conformance suite against %s: %w", url, perr)
	}
	r.URL, r.Output = url, text
	if err := AddChecks(&r, outDir); err != nil {
		return r, err
	}
	if !complete {
		why := "the suite ended before its summary"
		if runCtx.Err() != nil && ctx.Err() == nil {
			why = fmt.Sprintf("the suite was cut off after %s", timeout)
		} else if runErr != nil {
			why += " (" + runErr.Error() + ")"
		}
		for i := range r.Scenarios {
			if r.Scenarios[i].Status == NotRun {
				r.Scenarios[i].Reasons = []string{why}
			}
		}
	}
	return r, ctx.Err()
}
