package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/evidence/mcplocal"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// repro takes one incident, hang-1800s, and a whole --compress of at least
// 1; anything else is refused with the usage before anything is built.
func TestReproRefusesBadArguments(t *testing.T) {
	for _, c := range []struct {
		args []string
		err  string // "": the usage and exit 2
	}{
		{args: []string{"repro"}},
		{args: []string{"repro", "--compress", "3"}},
		{args: []string{"repro", "-compress=3", "hang-1800s"}},
		{args: []string{"repro", "hang-60s"}, err: `unknown incident "hang-60s" (known: hang-1800s)`},
		{args: []string{"repro", "hang-1800s", "--compress", "0"}, err: "--compress 0: want a whole number >= 1"},
		{args: []string{"repro", "hang-1800s", "--compress", "-5"}, err: "--compress -5: want a whole number >= 1"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(stopped(), c.args, &stdout, &stderr)
		if c.err == "" {
			if err != exitError(2) {
				t.Errorf("mcpchaos %v: %v, want exit 2", c.args, err)
			}
		} else if err == nil || err.Error() != c.err {
			t.Errorf("mcpchaos %v: %v, want %q", c.args, err, c.err)
		}
		wantUsage := !strings.HasPrefix(c.err, "--compress")
		if got := strings.Contains(stderr.String(), "usage: mcpchaos repro hang-1800s"); got != wantUsage {
			t.Errorf("mcpchaos %v: usage printed %v, want %v:\n%s", c.args, got, wantUsage, stderr.String())
		}
		if strings.Contains(stdout.String(), "time compressed") {
			t.Errorf("mcpchaos %v went on after refusing:\n%s", c.args, stdout.String())
		}
	}
}

// --compress N divides the incident's 1800 s client timeout by N, and the
// first line says so; --compress 1 is the incident in real time. (The
// context is already cancelled: nothing is built.)
func TestReproSaysItsCompressedTimes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct{ compress, timeout string }{{"1", "30m0s"}, {"2", "15m0s"}, {"300", "6s"}} {
		var stdout, stderr bytes.Buffer
		err := run(ctx, []string{"repro", "hang-1800s", "--compress", c.compress}, &stdout, &stderr)
		if !strings.HasPrefix(stderr.String(), "building mcplocal with the seed's two bugs (mutants unbounded-paginate and bare-404)...\n") {
			t.Errorf("repro does not say what it builds: %q", stderr.String())
		}
		if err == nil || !strings.Contains(err.Error(), "building the mutant") {
			t.Errorf("--compress %s with the context cancelled: %v, want the build cut short", c.compress, err)
		}
		want := "hang-1800s: time compressed " + c.compress + "×: the client's 1800 s timeout is " + c.timeout + ";"
		if !strings.HasPrefix(stdout.String(), want) {
			t.Errorf("--compress %s says %q, want %q", c.compress, stdout.String(), want)
		}
	}
}

// The incident is reproduced only when both halves show it: (a) never
// answers and answers the stale id with a bare 404; (b) answers in budget
// with its notice, recreates the session with its notice, and answers a
// raw request on it inside the JSON-RPC envelope. Each way it can fail is
// named.
func TestReproJudgesBothHalves(t *testing.T) {
	hung := reproResult{stale: staleResult{bare: true}}
	fixed := reproResult{answered: true, bounded: true, noticed: true, stale: staleResult{recreated: true, correlated: true}}
	if err := judgeRepro(hung, fixed); err != nil {
		t.Fatalf("the incident as it should be: %v", err)
	}
	for _, c := range []struct {
		name string
		a, b func(*reproResult)
		want string
	}{
		{"(a) erred", func(r *reproResult) { r.err = errors.New("boom") }, nil, "(a): boom"},
		{"(b) erred", nil, func(r *reproResult) { r.err = errors.New("boom") }, "(b): boom"},
		{"(a) answered", func(r *reproResult) { r.answered = true }, nil, "(a) answered: the mutant did not reproduce the hang"},
		{"(a) not bare", func(r *reproResult) { r.stale.bare = false; r.stale.wire = "200 json" }, nil, "(a) did not answer the stale session id with a bare 404: 200 json"},
		{"(b) unanswered", nil, func(r *reproResult) { r.answered = false }, "(b) broke its promise: answered=false within budget=true notice=true"},
		{"(b) late", nil, func(r *reproResult) { r.bounded = false }, "(b) broke its promise: answered=true within budget=false notice=true"},
		{"(b) silent", nil, func(r *reproResult) { r.noticed = false }, "(b) broke its promise: answered=true within budget=true notice=false"},
		{"(b) not recreated", nil, func(r *reproResult) { r.stale.recreated = false; r.stale.seen = "404" }, "(b) did not recreate the stale session with its notice: 404"},
		{"(b) uncorrelated", nil, func(r *reproResult) { r.stale.correlated = false; r.stale.wire = "404 text" }, "(b) answered a raw request on the recreated id outside the JSON-RPC envelope: 404 text"},
	} {
		a, b := hung, fixed
		if c.a != nil {
			c.a(&a)
		}
		if c.b != nil {
			c.b(&b)
		}
		if err := judgeRepro(a, b); err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// reproKnobs are the incident's knobs compressed by factor, the upstream
// bounds given the whole request deadline, as the command runs them.
func reproKnobs(factor int) mcplocal.Knobs {
	kv := mcplocal.CompressBy(factor)
	kv.UpstreamConnect, kv.UpstreamCallTimeout = kv.RequestDeadline, kv.RequestDeadline
	return kv
}

// Half (b) on mcplocal: docmost_search answers in budget with the ⚠
// notice and its waterfall; after a restart the client's call on its old
// session id is answered with the ⚠ Session state unavailable notice, and
// a raw request on that id gets a JSON-RPC answer carrying its id.
func TestReproHalfOnMcplocal(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	r := reproduce(ctx, &out, "(b) mcplocal", &harness.InProcess{}, reproKnobs(300), 6*time.Second)
	text := out.String()
	if r.err != nil {
		t.Fatalf("reproduce: %v\n%s", r.err, text)
	}
	if !r.answered || !r.bounded || !r.noticed || r.trace == "" {
		t.Errorf("docmost_search: answered %v bounded %v noticed %v trace %q\n%s", r.answered, r.bounded, r.noticed, r.trace, text)
	}
	if !r.stale.recreated || !r.stale.correlated || r.stale.bare || r.stale.trace == "" {
		t.Errorf("the stale session: %+v\n%s", r.stale, text)
	}
	for _, want := range []string{
		"\n== (b) mcplocal\n",
		"docmost_update_page  answered in ",
		"docmost_search       answered in ",
		"trace " + r.trace + "\n  ⚠ Smart page titles unavailable (",
		"\n-- the proxy restarts; the client still holds session ",
		"docmost_update_page  answered in ",
		"on the same session id, trace " + r.stale.trace + "\n  ⚠ Session state unavailable (",
		"raw tools/call on the id answered 200 ",
		": a JSON-RPC message the client can correlate\n\ntrace " + r.stale.trace + "  total ",
		"\n\ntrace " + r.trace + "  total ",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the output lacks %q:\n%s", want, text)
		}
	}
	if err := judgeRepro(reproResult{stale: staleResult{bare: true}}, r); err != nil {
		t.Errorf("(b) on mcplocal is not judged reproduced: %v", err)
	}
}

// The hang as the client sees it: a docmost_search that outlives the
// client's timeout is reported unanswered, with the session's audit trail
// (the hung call has no tool_call_trace row); here mcplocal's own LLM
// bounds are raised past the client's timeout to make it hang.
func TestReproReportsAHang(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	kv := reproKnobs(300)
	long := 30 * time.Second
	kv.PaginationLLMTimeout, kv.LLMCallBudget, kv.LLMProviderTimeout, kv.StageLLMBudget, kv.RequestDeadline = long, long, long, long, long
	var out bytes.Buffer
	r := reproduce(ctx, &out, "(a) a proxy that waits on its LLM", &harness.InProcess{}, kv, 2*time.Second)
	text := out.String()
	if r.err != nil {
		t.Fatalf("reproduce: %v\n%s", r.err, text)
	}
	if r.answered || r.latency < 2*time.Second {
		t.Errorf("the hung call: answered %v after %v\n%s", r.answered, r.latency, text)
	}
	for _, want := range []string{
		"docmost_search       NO ANSWER: the client gave up after 2",
		"\nThe proxy's audit trail for the session (",
		"trace codes): the hung docmost_search has no tool_call_trace row",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the output lacks %q:\n%s", want, text)
		}
	}
	// Every trace code of the session is counted once and drawn once, each
	// waterfall after a blank line.
	_, trail, _ := strings.Cut(text, "The proxy's audit trail for the session (")
	trail, _, _ = strings.Cut(trail, "-- the proxy restarts")
	var n int
	if _, err := fmt.Sscanf(trail, "%d trace codes", &n); err != nil {
		t.Fatalf("the audit trail does not count its trace codes: %v\n%s", err, text)
	}
	drawn := regexp.MustCompile(`\n\ntrace (\w+)  total`).FindAllStringSubmatch(trail, -1)
	codes := map[string]bool{}
	for _, d := range drawn {
		codes[d[1]] = true
	}
	if n < 2 || len(drawn) != n || len(codes) != n {
		t.Errorf("the audit trail counts %d trace codes and draws %d (%d distinct), want the same, at least 2:\n%s", n, len(drawn), len(codes), text)
	}
	if err := judgeRepro(r, reproResult{answered: true, bounded: true, noticed: true, stale: staleResult{recreated: true, correlated: true}}); err == nil ||
		!strings.Contains(err.Error(), "(a) did not answer the stale session id with a bare 404") {
		t.Errorf("mcplocal recreates the stale session, so (a) is no incident: %v", err)
	}
}

// clip keeps n bytes and marks the cut; firstText is a result's first text.
func TestReproClipAndFirstText(t *testing.T) {
	if clip("abc", 3) != "abc" || clip("abcd", 3) != "abc…" {
		t.Errorf("clip: %q %q", clip("abc", 3), clip("abcd", 3))
	}
	if firstText(nil) != "" {
		t.Error("firstText(nil) is not empty")
	}
	// An SSE stream cut before its blank line still ends its last event,
	// which answers another id.
	if answersID("text/event-stream", []byte(`data: {"jsonrpc":"2.0","id":8,"result":{}}`), "7") {
		t.Error("an unterminated event answering id 8 is read as the answer to 7")
	}
}
