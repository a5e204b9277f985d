//go:build canaryselftest

// The canary's own proof, too slow for make test (make canary-selftest): a
// candidate SDK that ignores a server's own session ids must turn the
// restart scenarios red, and an unpatched copy of the same SDK must change
// nothing.

package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"github.com/mcpchaos/mcpchaos/internal/syncbuf"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const sdkModule = "github.com/modelcontextprotocol/go-sdk"

// The lines of the pinned go-sdk that honour a server's GetSessionID, and the
// patch that breaks them: the SDK mints its own ids whatever the server asks.
// Session recreation leans on exactly this (proxy/project gives a recreated
// session a server whose GetSessionID returns the client's id), so a candidate
// with this change must turn the restart scenarios red. (The entry keeps its
// own session table, so recreation does not depend on the SDK's 404 for an
// id it does not know; breaking that 404 would prove nothing.)
const (
	sdkNotFoundLine = "if opts.GetSessionID == nil {\n\t\topts.GetSessionID = rand.Text\n\t}"
	sdkBrokenLine   = "opts.GetSessionID = rand.Text // the candidate ignores the server's own ids"
	sdkStreamable   = "mcp/server.go"
)

// The go-sdk copies the selftests hand the canary: the pinned SDK as it is,
// with the broken GetSessionID line, or as it is plus a file that does not
// compile.
type sdkVariant string

const (
	sdkUnpatched   sdkVariant = "unpatched"
	sdkBroken      sdkVariant = "broken"
	sdkUnbuildable sdkVariant = "unbuildable"
)

// sdkUnbuildableFile is the file the unbuildable copy adds.
const sdkUnbuildableFile = "canary_broken.go"

// sdkCopy copies the pinned go-sdk from the module cache to a writable
// directory, as variant says. The directory's path is fixed by what it holds
// (the pinned version's directory and the variant), under
// $TMPDIR/mcpchaos-canary-selftest: the candidate's build then finds what an
// earlier selftest compiled from the same copy in the build cache (a path is
// part of a compiled package's key), where a fresh directory each time
// compiled the SDK and everything that imports it again. A copy is made in a
// scratch directory beside it and renamed into place whole, so a reader never
// sees half a copy and two runs at once agree on one.
func sdkCopy(t *testing.T, variant sdkVariant) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", sdkModule).Output()
	if err != nil {
		t.Fatalf("go list -m %s: %v", sdkModule, err)
	}
	src := strings.TrimSpace(string(out))
	root := filepath.Join(os.TempDir(), "mcpchaos-canary-selftest")
	sum := sha256.Sum256([]byte(src + "\x00" + string(variant)))
	final := filepath.Join(root, fmt.Sprintf("%s-%x", variant, sum[:6]), "go-sdk")
	if _, err := os.Stat(final); err == nil {
		return final
	}
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		t.Fatal(err)
	}
	scratch, err := os.MkdirTemp(filepath.Dir(final), "making-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(scratch)
	dst := filepath.Join(scratch, "go-sdk")
	if out, err := exec.Command("cp", "-r", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp -r %s: %v\n%s", src, err, out)
	}
	if out, err := exec.Command("chmod", "-R", "u+w", dst).CombinedOutput(); err != nil {
		t.Fatalf("chmod: %v\n%s", err, out)
	}
	switch variant {
	case sdkBroken:
		file := filepath.Join(dst, sdkStreamable)
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), sdkNotFoundLine); n != 1 {
			t.Fatalf("%s of the pinned go-sdk has %d copies of %q, want 1: update this selftest's patch to the SDK in go.mod", sdkStreamable, n, sdkNotFoundLine)
		}
		if err := os.WriteFile(file, []byte(strings.Replace(string(b), sdkNotFoundLine, sdkBrokenLine, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	case sdkUnbuildable:
		if err := os.WriteFile(filepath.Join(dst, "mcp", sdkUnbuildableFile), []byte("package mcp\n\nvar _ = canaryUndefinedName\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Another run may have put the same copy in place meanwhile: then
	// the rename fails and that copy, identical, is the one used.
	if err := os.Rename(dst, final); err != nil {
		if _, serr := os.Stat(final); serr != nil {
			t.Fatalf("putting the go-sdk copy in place: %v", err)
		}
	}
	return final
}

// noCache runs both sides in the same run, as the noise floor needs, and
// keeps the selftests out of the user's baseline cache.
const noCache = "--baseline-cache="

func runCanaryCLI(t *testing.T, args ...string) (stdout string, err error) {
	t.Helper()
	stdout, _, err = runCanaryCLIProgress(t, args...)
	return stdout, err
}

// selftestRunCap stops one canary run of a selftest that hangs; the
// Makefile's go test -timeout is above it.
const selftestRunCap = 45 * time.Minute

// runCanaryCLIProgress also returns the progress lines (stderr).
func runCanaryCLIProgress(t *testing.T, args ...string) (stdout, progress string, err error) {
	t.Helper()
	// A hang guard, not a bound on the canary: beside make test and a busy
	// loop per core the unpatched run took over 15 minutes (6 when quiet).
	ctx, cancel := context.WithTimeout(context.Background(), selftestRunCap)
	defer cancel()
	var out bytes.Buffer
	var prog syncBuffer
	start := time.Now()
	err = run(ctx, append([]string{"canary"}, args...), &out, io.MultiWriter(testWriter{t}, &prog))
	t.Logf("mcpchaos canary %s: %v, took %v\n%s", strings.Join(args, " "), err, time.Since(start).Round(time.Second), out.String())
	return out.String(), prog.String(), err
}

type syncBuffer = syncbuf.Buffer

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// TestCanarySelftest runs the selftests below: the unpatched one (the
// whole catalogue and the default specs, on both sides) beside the four
// others in turn. Each canary run mostly waits on the proxies it drives, so
// the two halves overlap at little cost; the unpatched one starts at once,
// being the longest. One of them alone:
// -run '^TestCanarySelftest$/^inTurn$/^ClientSDKLeavesTheProxyOnTheBaseline$'.
func TestCanarySelftest(t *testing.T) {
	t.Run("UnpatchedSDKChangesNothing", func(t *testing.T) {
		t.Parallel()
		selftestUnpatchedSDKChangesNothing(t)
	})
	t.Run("inTurn", func(t *testing.T) {
		t.Parallel()
		t.Run("BrokenSDKFailsTheRestartScenarios", selftestBrokenSDKFailsTheRestartScenarios)
		t.Run("ClientSDKLeavesTheProxyOnTheBaseline", selftestClientSDKLeavesTheProxyOnTheBaseline)
		t.Run("ABuildFailureIsAResult", selftestABuildFailureIsAResult)
		t.Run("ASecondCandidateReusesTheBaseline", selftestASecondCandidateReusesTheBaseline)
	})
}

// A go-sdk that ignores a server's GetSessionID: a recreated session comes
// back under a new id, which the client does not hold, so recreation fails.
// The canary must fail, naming the restart scenarios as newly failing.
func selftestBrokenSDKFailsTheRestartScenarios(t *testing.T) {
	out, err := runCanaryCLI(t, "--sdk", sdkModule+"="+sdkCopy(t, sdkBroken), "--label", "restart", "--seed", "1", noCache)
	var exit exitError
	if !errors.As(err, &exit) || exit != 1 {
		t.Fatalf("the canary against a go-sdk that ignores GetSessionID returned %v, want exit status 1", err)
	}
	for _, name := range []string{"proxy-restart × reconnect after restart", "proxy-kill × reconnect after restart"} {
		if !strings.Contains(out, "NEWLY FAILING "+name+":") {
			t.Errorf("the output does not name %q as newly failing", name)
		}
	}
	if !strings.Contains(out, "canary: FAIL:") {
		t.Error("the verdict line does not say FAIL")
	}
}

// The same SDK, unpatched: no change at all, not even a latency flag at the
// stated tolerance (the canary's noise floor), over the whole catalogue and
// the default specs.
func selftestUnpatchedSDKChangesNothing(t *testing.T) {
	out, prog, err := runCanaryCLIProgress(t, "--sdk", sdkModule+"="+sdkCopy(t, sdkUnpatched), "--seed", "1", noCache)
	if err != nil {
		t.Fatalf("the canary against an unpatched copy of the pinned go-sdk returned %v, want success", err)
	}
	// Its Ginkgo specs never run in the work tree, where a make test may
	// be running the same suites (they would share a compiled test binary).
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	const inCopy = "canary: baseline: its Ginkgo specs run in "
	i := strings.Index(prog, inCopy)
	if i < 0 {
		t.Errorf("the progress does not say the baseline's specs ran in a copy of the module")
	} else if dir, _, _ := strings.Cut(prog[i+len(inCopy):], " "); strings.HasPrefix(dir, root+string(filepath.Separator)) || dir == root {
		t.Errorf("the baseline's specs ran in the work tree (%s)", dir)
	}
	if !strings.Contains(out, "canary: no change:") {
		t.Errorf("the verdict is not \"no change\"")
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "slower by") || strings.Contains(l, "NEWLY") {
			t.Errorf("a row changed against the unpatched SDK: %s", l)
		}
	}
}

// --client-sdk switches the harness alone: with the same broken go-sdk given
// to the clients only, the proxy stays on go.mod's and still recreates
// sessions, so the session scenarios keep passing. (Label sessions, not
// restart: the harness's fake upstream is a go-sdk server too, so an
// upstream restart does change with the harness's SDK. The Ginkgo specs are
// left out: their in-process proxy is built with the harness's SDK.)
func selftestClientSDKLeavesTheProxyOnTheBaseline(t *testing.T) {
	out, err := runCanaryCLI(t, "--client-sdk", sdkModule+"="+sdkCopy(t, sdkBroken), "--label", "sessions", "--specs", "", "--seed", "1", noCache)
	if err != nil {
		t.Fatalf("the canary with a broken server half in the clients' SDK only returned %v, want success: the proxy must stay on the baseline", err)
	}
	for _, name := range []string{"proxy-restart × reconnect after restart", "proxy-kill × reconnect after restart"} {
		if !strings.Contains(out, name) {
			t.Errorf("the table has no row %q", name)
		}
	}
	if strings.Contains(out, "NEWLY FAILING") {
		t.Error("a row newly fails although the proxy is the baseline's")
	}
}

// A candidate that does not compile is a result, not a crash: exit status
// 1, the compiler's first lines, and the baseline's rows marked NOT BUILT.
func selftestABuildFailureIsAResult(t *testing.T) {
	sdk := sdkCopy(t, sdkUnbuildable)
	out, err := runCanaryCLI(t, "--sdk", sdkModule+"="+sdk, "--label", "baseline", "--specs", "", "--seed", "1", noCache)
	var exit exitError
	if !errors.As(err, &exit) || exit != 1 {
		t.Fatalf("the canary against a go-sdk that does not compile returned %v, want exit status 1", err)
	}
	for _, want := range []string{"does not build", "undefined: canaryUndefinedName", "none × tools/list", "NOT BUILT", "canary: FAIL: the candidate does not build"} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q", want)
		}
	}
}

// A second candidate against the same tree takes the baseline's verdicts
// from the cache instead of running its suite again (a user checking five
// versions pays for one baseline), and the table is the same.
func selftestASecondCandidateReusesTheBaseline(t *testing.T) {
	cache := t.TempDir()
	sdk := sdkCopy(t, sdkUnbuildable)
	args := []string{"--sdk", sdkModule + "=" + sdk, "--label", "baseline", "--specs", "", "--baseline-cache", cache}
	first, prog, _ := runCanaryCLIProgress(t, args...)
	if !strings.Contains(prog, "verdicts cached in "+cache) || strings.Contains(prog, "from the cache") {
		t.Fatalf("the first run did not run and cache the baseline:\n%s", prog)
	}
	second, prog, _ := runCanaryCLIProgress(t, args...) // no --seed: the cached baseline's
	if !strings.Contains(prog, "verdicts from the cache") || strings.Contains(prog, "baseline: the catalogue") {
		t.Fatalf("the second run ran the baseline's suite again:\n%s", prog)
	}
	table := func(out string) string { // the rows, without the timing of the verdict line
		i := strings.Index(out, "the candidate (")
		if i < 0 {
			t.Fatalf("no verdict line in:\n%s", out)
		}
		return out[:i]
	}
	if table(first) != table(second) {
		t.Errorf("the table changed with a cached baseline:\n%s\n---\n%s", first, second)
	}
}
