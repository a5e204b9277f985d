package project

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/session"
)

// wireError is the JSON-RPC error a client got, or nil.
func wireError(err error) *jsonrpc.Error {
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return we
	}
	return nil
}

// When upstreams fail the client is told so in the proxy's words: a server
// that cannot be reached is left out of a list and logged (with the trace
// code), and its features are not advertised; a list no server answered is
// an error naming the method; a refusal the upstream answered keeps its
// code; a completion without a ref is refused; a name with two server
// prefixes goes to the longest.
func TestSurfaceFailuresInTheProxysWords(t *testing.T) {
	const down = "http://127.0.0.1:1/mcp"
	lines := &logLines{}
	rows := &rowsSeen{}
	// t offers tools only: it is never asked for prompts or resources.
	p := New("p", Options{Servers: map[string]string{"a": richUpstream(t, "a"), "a_b": richUpstream(t, "ab"), "down": down, "t": newCountingUpstream(t).url},
		Sessions: session.NewTable(), Audit: rows, Knobs: knobs.Defaults(), Logger: lines.logger()})
	t.Cleanup(p.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs := connectClient(ctx, t, serveProject(t, p))
	if caps := cs.InitializeResult().Capabilities; caps.Prompts == nil || caps.Resources == nil || !caps.Resources.Subscribe || caps.Completions == nil {
		t.Errorf("advertised %+v: the reachable servers' features, want prompts, resources with subscribe, completions", caps)
	}
	unreachable := lines.with(t, "initialize: upstream unreachable; its features are not advertised")
	if len(unreachable) != 1 || unreachable[0]["server"] != "down" || unreachable[0]["level"] != "WARN" {
		t.Errorf("initialize logged %v, want one warning naming down", unreachable)
	}
	prompts, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, pr := range prompts.Prompts {
		names = append(names, pr.Name)
	}
	if strings.Join(names, ",") != "a_b_prompt,a_prompt" {
		t.Errorf("prompts %v, want a_b_prompt,a_prompt (sorted; down left out)", names)
	}
	failed := lines.with(t, "prompts/list: upstream failed")
	if len(failed) != 1 || failed[0]["server"] != "down" || failed[0]["trace"] == "" || !strings.Contains(failed[0]["err"].(string), "127.0.0.1:1") {
		t.Errorf("prompts/list logged %v, want one warning naming down, the trace and its error", failed)
	}
	// The longest server prefix wins: a_b_prompt is a_b's "prompt".
	got, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "a_b_prompt"})
	if err != nil || got.Description != "ab:prompt" {
		t.Errorf("a_b_prompt: %+v, %v; want a_b's prompt", got, err)
	}
	// The upstream's own refusal keeps its code.
	_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "a_nosuch"})
	if we := wireError(err); we == nil || we.Code != codeInvalidParams || !strings.Contains(we.Message, "nosuch") {
		t.Errorf("an unknown upstream prompt: %v, want the upstream's invalid params", err)
	}
	// A server that cannot be reached is the proxy's failure, not the SDK's.
	_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "down_prompt"})
	if we := wireError(err); we == nil || we.Code == codeInvalidParams || !strings.Contains(we.Message, "upstream down: ") {
		t.Errorf("a prompt of the unreachable server: %v, want the proxy's own failure naming upstream down", err)
	}
	// A request answered by one server names it on its row.
	var served []string
	rows.mu.Lock()
	for _, r := range rows.rows {
		if r.Tool == "prompts/get" {
			served = append(served, r.Server)
		}
	}
	rows.mu.Unlock()
	if got := strings.Join(served, ","); got != "a_b,a,down" {
		t.Errorf("the prompts/get rows name the servers %q, want a_b,a,down", got)
	}
	// A resource URI (not a template) completes on the server that listed it.
	if _, err := cs.ListResources(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: "mem://ab/doc"}, Argument: mcp.CompleteParamsArgument{Name: "x"}}); err != nil || len(got.Completion.Values) != 1 || got.Completion.Values[0] != "ab" {
		t.Errorf("completing a_b's resource: %+v, %v", got, err)
	}
	err = cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "mem://nosuch"})
	if we := wireError(err); we == nil || we.Code != codeInvalidParams || traceCode.ReplaceAllString(we.Message, "[trace X]") != `no server of project p lists the resource "mem://nosuch"; call resources/list [trace X]` {
		t.Errorf("subscribing to a resource no server lists: %v", err)
	}
	_, err = cs.Complete(ctx, &mcp.CompleteParams{Argument: mcp.CompleteParamsArgument{Name: "x"}})
	if we := wireError(err); we == nil || we.Code != codeInvalidParams || traceCode.ReplaceAllString(we.Message, "[trace X]") != "completion/complete needs a ref [trace X]" {
		t.Errorf("a completion without a ref: %v", err)
	}

	only := New("q", Options{Servers: map[string]string{"down": down}, Sessions: session.NewTable(), Audit: discardRows{}, Knobs: knobs.Defaults(), Logger: lines.logger()})
	t.Cleanup(only.Close)
	qs := connectClient(ctx, t, serveProject(t, only))
	for _, c := range []struct {
		method string
		call   func() error
	}{
		{"tools/list", func() error { _, err := qs.ListTools(ctx, nil); return err }},
		{"prompts/list", func() error { _, err := qs.ListPrompts(ctx, nil); return err }},
		{"resources/list", func() error { _, err := qs.ListResources(ctx, nil); return err }},
		{"resources/templates/list", func() error { _, err := qs.ListResourceTemplates(ctx, nil); return err }},
	} {
		err := c.call()
		if we := wireError(err); we == nil || !strings.HasPrefix(we.Message, "no upstream server of project q answered "+c.method+": down: upstream down: ") {
			t.Errorf("%s with no server answering: %v", c.method, err)
		}
	}
}

// The servers are taken in name order: an error naming every server that
// failed names them sorted, whatever order the configuration gave them in.
func TestServersAreTakenInNameOrder(t *testing.T) {
	servers := map[string]string{}
	var want []string
	for _, n := range []string{"k", "c", "h", "a", "l", "e", "j", "b", "g", "d", "i", "f"} {
		servers[n] = "http://127.0.0.1:1/mcp"
	}
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"} {
		want = append(want, n+": upstream "+n+": ")
	}
	p := New("p", Options{Servers: servers, Sessions: session.NewTable(), Audit: discardRows{}, Knobs: knobs.Defaults(), Logger: (&logLines{}).logger()})
	t.Cleanup(p.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := connectClient(ctx, t, serveProject(t, p)).ListTools(ctx, nil)
	we := wireError(err)
	if we == nil {
		t.Fatalf("tools/list with no server answering: %v", err)
	}
	at := 0
	for _, w := range want {
		i := strings.Index(we.Message[at:], w)
		if i < 0 {
			t.Fatalf("the error %q does not name %q after position %d: want every server, in name order", we.Message, w, at)
		}
		at += i + len(w)
	}
}

// tools/list answers with the tools of the servers that answered when
// another cannot be reached, and the ⚠ notice of the one that did not
// (<server>_unavailable, TestAServerThatCannotListIsNotedInToolsList).
func TestToolsListLeavesOutAnUnreachableServer(t *testing.T) {
	p := New("p", Options{Servers: map[string]string{"up": newCountingUpstream(t).url, "down": "http://127.0.0.1:1/mcp"},
		Sessions: session.NewTable(), Audit: discardRows{}, Knobs: knobs.Defaults(), Logger: (&logLines{}).logger()})
	t.Cleanup(p.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := connectClient(ctx, t, serveProject(t, p)).ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list with one server down: %v", err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	if got := strings.Join(names, ","); got != "down_unavailable,up_block,up_t" {
		t.Errorf("tools %s, want down_unavailable,up_block,up_t", got)
	}
}

// initialize is answered in time whatever the upstreams do: it waits for a
// connect at most half of what is left of the request's deadline (here
// shorter than the connect knob), then answers without what it could not
// learn.
func TestInitializeIsAnsweredWithinHalfTheDeadline(t *testing.T) {
	release := make(chan struct{})
	hung := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	t.Cleanup(hung.Close)
	t.Cleanup(func() { close(release) }) // before the server's Close, which waits for its handlers
	const deadline = 800 * time.Millisecond
	k := knobs.Defaults()
	k.RequestDeadline = deadline
	k.UpstreamConnect = time.Second // above the deadline, below twice it: only half the deadline answers in time
	p := New("p", Options{Servers: map[string]string{"hung": hung.URL}, Sessions: session.NewTable(), Audit: discardRows{}, Knobs: k, Logger: (&logLines{}).logger()})
	t.Cleanup(p.Close)
	url := serveProject(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	took := time.Since(start)
	if err != nil {
		t.Fatalf("initialize with an upstream that never answers: %v (after %v)", err, took)
	}
	defer cs.Close()
	// Half the deadline is 400 ms; the answer must come before the
	// deadline's 800 ms (400 ms of slack for a loaded machine).
	if took < deadline/2-50*time.Millisecond || took >= deadline {
		t.Errorf("initialize answered after %v, want about %v (half the %v deadline), before the deadline", took, deadline/2, deadline)
	}
	if caps := cs.InitializeResult().Capabilities; caps.Prompts != nil || caps.Resources != nil || caps.Logging != nil {
		t.Errorf("advertised %+v for an upstream never heard from", caps)
	}
}
