package catalogue

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// Two misjudgements a third-party proxy met, each held here so it stays
// fixed.

// A proxy that opens its upstream session when a client's session opens
// (a per-session child, say) meets an upstream fault at the initialize. The
// row is then about an initialize never answered, for as long as the client
// waited: not a tools/call the client "gave up on after 0s".
func TestASessionThatNeverOpensIsTimedAndNamed(t *testing.T) {
	env := inFront(t, func(w http.ResponseWriter, r *http.Request, b *[]byte) bool {
		if strings.Contains(string(*b), `"initialize"`) {
			<-r.Context().Done() // the upstream behind it never answers
			return true
		}
		return false
	})
	const wait = 400 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	o := SmallCall.Do(ctx, env)
	if EndingOf(o) != EndNoAnswer {
		t.Fatalf("an initialize never answered ended as %v (%v)", EndingOf(o), o.Err)
	}
	if o.Latency < wait-50*time.Millisecond {
		t.Errorf("the observation took %v, want about the %v the client waited for the initialize", o.Latency, wait)
	}
	r := byName(t, "bandwidth × paginating tools/call").JudgeOn(env.Target, env.Bounds(), o)
	if len(r.Breaches) != 1 || r.Breaches[0].Promise != PromiseAnswered || !strings.Contains(r.Breaches[0].Detail, "initialize") {
		t.Errorf("want one breach of %q naming the initialize, got %s", PromiseAnswered, r.Reason)
	}
}

// A slow tool must be slower than the budget in force, whatever the target
// declares: a 5 s tool behind a proxy that declares 10 s is not a call the
// proxy had to cut, so its success is no breach.
func TestASlowToolOutlastsTheBudgetInForce(t *testing.T) {
	slow := byName(t, "tool-slow × paginating tools/call")
	f, ok := slow.Fault.(harness.ToolSlow)
	if !ok {
		t.Fatalf("the row's fault is %T", slow.Fault)
	}
	for _, tg := range []harness.Target{
		&harness.InProcess{},
		foreignTarget(t, "name: patient\ncommand: [x]\nendpoint: /mcp\nbudgets: {request: 10s}\n"),
		foreignTarget(t, "name: hasty\ncommand: [x]\nendpoint: /mcp\nbudgets: {request: 200ms}\n"),
	} {
		kv := harness.BudgetsOf(tg, harness.CompressedBounds())
		if d, budget := f.DelayIn(kv), slow.Budget(kv); d <= budget+Tolerance {
			t.Errorf("%s: the slow tool answers after %v, within the budget %v + %v: nothing to cut", tg.Name(), d, budget, Tolerance)
		}
	}
	// A delay asked for by name (mcpchaos run --fault) is kept as asked.
	if d := (harness.ToolSlow{Tool: "search", Delay: time.Second}).DelayIn(harness.CompressedBounds()); d != time.Second {
		t.Errorf("an explicit delay became %v", d)
	}
}

// A proxy that did not cut a call at its budget and answered late with the
// tool's own result broke one promise (within budget), not also "a tool
// failure as isError": one cause, one breach.
func TestALateAnswerToACallThatNeededACutIsOneBreach(t *testing.T) {
	declared := foreignTarget(t, "name: declared\ncommand: [x]\nendpoint: /mcp\nbudgets: {request: 2s}\n")
	kv := harness.BudgetsOf(declared, harness.CompressedBounds())
	for _, name := range []string{"tool-slow × paginating tools/call", "tool-hang × small tools/call"} {
		r := byName(t, name).JudgeOn(declared, kv, Observation{Latency: 9 * time.Second, Text: "the tool's own answer"})
		if len(r.Breaches) != 1 || r.Breaches[0].Promise != PromiseBudget {
			t.Errorf("%s, answered late with success: want one breach of %q, got %s", name, PromiseBudget, r.Reason)
		}
		// In time, success is still not a cut: that breach stays.
		r = byName(t, name).JudgeOn(declared, kv, Observation{Latency: time.Second, Text: "the tool's own answer"})
		if len(r.Breaches) != 1 || r.Breaches[0].Promise != PromiseIsError {
			t.Errorf("%s, answered in time with success: want one breach of %q, got %s", name, PromiseIsError, r.Reason)
		}
	}
}

// The MCP spec asks a server to refuse a foreign Origin with 403 (DNS
// rebinding); it asks nothing of the Host header. A proxy that checks the
// Origin alone keeps the generic promise; one that serves the foreign
// Origin breaks it. (mcplocal's own Origin row holds it to the Host too.)
func TestTheGenericOriginRowAsksWhatTheSpecAsks(t *testing.T) {
	originOnly := func(w http.ResponseWriter, r *http.Request, _ *[]byte) bool {
		if r.Header.Get("Origin") == "http://evil.example" {
			http.Error(w, "forbidden origin", http.StatusForbidden)
			return true
		}
		r.Host = "" // the Host is not looked at: the upstream is asked by its own name
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if o := ForeignOrigin.Do(ctx, inFront(t, originOnly)); o.Err != nil || len(o.Broken) > 0 {
		t.Errorf("a proxy refusing the foreign Origin, whatever the Host: %v %s", o.Err, strings.Join(o.Broken, "; "))
	}
	open := func(w http.ResponseWriter, r *http.Request, _ *[]byte) bool {
		r.Header.Del("Origin") // what reaches the server: nothing to check
		r.Host = ""
		return false
	}
	if o := ForeignOrigin.Do(ctx, inFront(t, open)); o.Err == nil && len(o.Broken) == 0 {
		t.Errorf("a proxy serving a foreign Origin kept the promise")
	}
}

// An empty JSON array holds no request to answer: the official TypeScript
// SDK's server accepts it with 202 and no body, as the MCP transport does a
// body of notifications alone. That is an answer, not a breach; a 2xx that
// is neither (a 200 with no JSON-RPC error) still is one.
func TestAnEmptyBatchAcceptedWith202IsAnswered(t *testing.T) {
	answering := func(status int, body string) func(http.ResponseWriter, *http.Request, *[]byte) bool {
		return func(w http.ResponseWriter, r *http.Request, b *[]byte) bool {
			if strings.TrimSpace(string(*b)) == "[]" {
				w.WriteHeader(status)
				_, _ = w.Write([]byte(body))
				return true
			}
			return false
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if o := MalformedRequests.Do(ctx, inFront(t, answering(http.StatusAccepted, ""))); o.Err != nil || len(o.Broken) > 0 {
		t.Errorf("[] accepted with 202: %v %s", o.Err, strings.Join(o.Broken, "; "))
	}
	if o := MalformedRequests.Do(ctx, inFront(t, answering(http.StatusOK, `{"jsonrpc":"2.0","id":null,"result":{}}`))); len(o.Broken) == 0 {
		t.Errorf("[] answered 200 with a result kept the promise")
	}
}

// "The proxy still serves" asks for an answer, not a fast one: a proxy that
// opens each session slowly (a child process per session) is not dead
// because its initialize outlasts the harness's own request knob. One that
// never answers is.
func TestAProxySlowToOpenASessionStillServes(t *testing.T) {
	var slow time.Duration
	env := inFront(t, func(w http.ResponseWriter, r *http.Request, b *[]byte) bool {
		if strings.Contains(string(*b), `"initialize"`) {
			time.Sleep(slow)
		}
		return false
	})
	slow = 2*env.Bounds().D(harness.BoundRequest) + Tolerance
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if why := dead(ctx, env); why != "" {
		t.Errorf("a proxy that opens a session in %v was taken for dead: %s", slow, why)
	}
	hung := inFront(t, func(w http.ResponseWriter, r *http.Request, b *[]byte) bool {
		if strings.Contains(string(*b), `"initialize"`) {
			<-r.Context().Done()
			return true
		}
		return false
	})
	short, cancel2 := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel2()
	if why := dead(short, hung); why == "" {
		t.Errorf("a proxy that never answers an initialize was taken for serving")
	}
}

// A proxy on an SDK older than the newest protocol version answers 400 to a
// request naming a version it does not know. An initialize names none (the
// MCP spec's header is for the requests after it), and later requests name
// the version the proxy chose: such a proxy is judged on what the row asks,
// not refused for the harness's header.
func TestRawRowsSpeakTheVersionTheProxyChose(t *testing.T) {
	older := func(w http.ResponseWriter, r *http.Request, _ *[]byte) bool {
		if v := r.Header.Get("Mcp-Protocol-Version"); v != "" && v != "2025-06-18" {
			http.Error(w, "Bad Request: unsupported protocol version "+v, http.StatusBadRequest)
			return true
		}
		if r.Header.Get("Origin") == "http://evil.example" {
			http.Error(w, "forbidden origin", http.StatusForbidden)
			return true
		}
		r.Host = ""
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if o := ForeignOrigin.Do(ctx, inFront(t, older)); o.Err != nil || len(o.Broken) > 0 {
		t.Errorf("the Origin row on a proxy of an older protocol version: %v %s", o.Err, strings.Join(o.Broken, "; "))
	}
	if o := MalformedRequests.Do(ctx, inFront(t, older)); o.Err != nil {
		t.Errorf("the malformed-requests row could not open its session on a proxy of an older protocol version: %v", o.Err)
	}
}
