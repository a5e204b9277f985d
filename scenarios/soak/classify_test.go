package soak

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/load"
)

func TestClassifyCountsEveryRequestOnceAndJudgesOnlyWhatThePromiseCovers(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	kill := Event{Kind: "proxy-kill", Start: at(1000), End: at(1100)}
	restart := Event{Kind: "proxy-restart", Start: at(5000), End: at(5200)}
	reset := fmt.Errorf("read: %w", syscall.ECONNRESET)
	refused := fmt.Errorf("dial: %w", syscall.ECONNREFUSED)
	calls := []call{
		{start: at(0), end: at(100)},                                    // in budget
		{start: at(0), end: at(900)},                                    // late (limit 800 ms)
		{start: at(0), end: at(100), err: &load.RPCError{Code: -32001}}, // answered with an error: in budget
		{start: at(900), end: at(1050), err: reset},                     // in flight at the kill
		{start: at(1120), end: at(1121), err: refused},                  // refused while the killed proxy restarts
		{start: at(4900), end: at(5100), err: reset},                    // cut by the graceful restart
		{start: at(3000), end: at(3100), err: reset},                    // the proxy was up: unanswered
		{start: at(3000), end: at(4000), err: context.DeadlineExceeded}, // the client gave up: unanswered
		{start: at(3000), end: at(3001), err: refused},                  // refused with no restart going on: unanswered
		{start: at(0), end: at(100), res: load.Result{IsError: true}},   // an isError result is an answer
	}
	var ex []string
	c := classify(calls, []Event{kill, restart}, 800*time.Millisecond, &ex)
	want := Counts{Requests: 10, InBudget: 3, Late: 1, ToolErrors: 1, Unanswered: 3, Refused: 1, CutByRestart: 1, LostToKill: 1}
	if c != want {
		t.Fatalf("classify = %+v\nwant       %+v", c, want)
	}
	r := &Report{Counts: c, Budget: 500 * time.Millisecond}
	if len(r.Problems()) != 2 { // late and unanswered
		t.Errorf("problems %q, want the late and the unanswered ones", r.Problems())
	}
	if len(ex) == 0 {
		t.Error("no examples of what went wrong")
	}
}

// A call is late by the time the proxy had, not by the time the machine's
// load kept the client from running: its stall is not counted, and what is
// left past the limit still is.
func TestClassifyDoesNotCountTheMachinesStallsAsLate(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	calls := []call{
		{start: at(0), end: at(900), stalled: 150 * time.Millisecond},  // 750 ms of its own: in budget
		{start: at(0), end: at(1200), stalled: 150 * time.Millisecond}, // 1,050 ms of its own: late
		{start: at(0), end: at(900)},                                   // no stall: late
	}
	var ex []string
	c := classify(calls, nil, 800*time.Millisecond, &ex)
	if c.InBudget != 1 || c.Late != 2 {
		t.Fatalf("classify = %+v, want 1 in budget and 2 late", c)
	}
	if !strings.Contains(strings.Join(ex, "\n"), "150ms of it the machine's load, not counted") {
		t.Errorf("a late call's example does not say what of it was the machine's load: %q", ex)
	}
}

func TestAnsweredSeparatesAnswersFromTransportFailures(t *testing.T) {
	for _, err := range []error{nil, &load.RPCError{Code: -32001}, &load.HTTPError{Status: 404}} {
		if !load.Answered(err) {
			t.Errorf("Answered(%v) = false", err)
		}
	}
	for _, err := range []error{errors.New("EOF"), context.DeadlineExceeded, syscall.ECONNREFUSED} {
		if load.Answered(err) {
			t.Errorf("Answered(%v) = true", err)
		}
	}
}

// A load balancer's own error page (HAProxy's 502 when the replica behind it
// died mid-call) is no answer from any proxy: lost to the kill it overlaps,
// unanswered when nothing was going on. A proxy's own 502 with a JSON body
// is an answer.
func TestABalancersErrorPageIsNoAnswer(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	kill := Event{Kind: "proxy-kill", Start: at(1000), End: at(1100)}
	page := &load.HTTPError{Status: 502, Body: "<html><body><h1>502 Bad Gateway</h1>\nThe server returned an invalid or incomplete response.\n</body></html>"}
	calls := []call{
		{start: at(900), end: at(1050), err: page},                                               // in flight on the killed replica
		{start: at(3000), end: at(3100), err: page},                                              // nothing going on: unanswered
		{start: at(3000), end: at(3100), err: &load.HTTPError{Status: 502, Body: `{"error":1}`}}, // a proxy's own answer
	}
	c := classify(calls, []Event{kill}, 800*time.Millisecond, nil)
	want := Counts{Requests: 3, InBudget: 1, Unanswered: 1, LostToKill: 1}
	if c != want {
		t.Fatalf("classify = %+v\nwant       %+v", c, want)
	}
}
