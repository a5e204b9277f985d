package project

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/session"
)

// Servers put and removed while the project serves: a new one is listed
// (names sorted) and every session told its lists changed; putting one
// unchanged does nothing; a replaced or removed one's upstream sessions are
// dropped with what the session routed to it, and no other server's.
func TestServersChangeWhileServing(t *testing.T) {
	aURL, bURL, a2URL := richUpstream(t, "a"), richUpstream(t, "b"), richUpstream(t, "a2")
	p := New("p", Options{Servers: map[string]string{"a": aURL}, Sessions: session.NewTable(), Audit: discardRows{}, Knobs: knobs.Defaults(), Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(p.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	heard := make(chan string, 64)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, &mcp.ClientOptions{
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { heard <- "tools" },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { heard <- "prompts" },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { heard <- "resources" },
	}).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: serveProject(t, p), MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	p.mu.Lock()
	cl := p.clients[cs.ID()]
	p.mu.Unlock()
	if !waitFor(ctx, cl.isListening) {
		t.Fatal("the client's stream never reached the project")
	}
	// Each change is told as tools, prompts and resources list_changed.
	told := func(step string) {
		t.Helper()
		got := map[string]bool{}
		for len(got) < 3 {
			select {
			case k := <-heard:
				got[k] = true
			case <-time.After(5 * time.Second): // notifications on loopback: far more than they need
				t.Fatalf("%s: the session was told %v, want tools, prompts and resources list_changed", step, got)
			}
		}
	}
	routes := func() string {
		cl.mu.Lock()
		defer cl.mu.Unlock()
		var out []string
		for k, v := range cl.uris {
			out = append(out, k+"="+v)
		}
		for k, v := range cl.templates {
			out = append(out, k+"="+v)
		}
		for k := range cl.conns {
			out = append(out, "conn "+k)
		}
		sort.Strings(out)
		return strings.Join(out, ",")
	}
	list := func() {
		t.Helper()
		if _, err := cs.ListResources(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.ListResourceTemplates(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}

	p.PutServer("b", bURL, nil)
	told("adding b")
	if got := fmt.Sprint(p.Servers()); got != fmt.Sprintf("map[a:%s b:%s]", aURL, bURL) {
		t.Errorf("Servers() = %s", got)
	}
	p.Servers()["z"] = "mutated" // a copy
	if got := strings.Join(p.serverNames(), ","); got != "a,b" {
		t.Errorf("server names %s, want a,b", got)
	}
	list()
	before := routes()
	if want := "conn a,conn b,mem://a/doc=a,mem://a/items/{id}=a,mem://b/doc=b,mem://b/items/{id}=b"; before != want {
		t.Fatalf("the session routes %s, want %s", before, want)
	}
	p.PutServer("a", aURL, nil) // unchanged
	if got := routes(); got != before {
		t.Errorf("putting a unchanged changed the routes to %s", got)
	}
	p.PutServer("a", a2URL, nil)
	told("replacing a")
	if got, want := routes(), "conn b,mem://b/doc=b,mem://b/items/{id}=b"; got != want {
		t.Errorf("after a was replaced the session routes %s, want %s", got, want)
	}
	p.mu.Lock()
	_, known := p.caps["a"]
	p.mu.Unlock()
	if known {
		t.Error("the replaced server's capabilities are still held: the new one's are not learned again")
	}
	list()
	if got, want := routes(), "conn a,conn b,mem://a2/doc=a,mem://a2/items/{id}=a,mem://b/doc=b,mem://b/items/{id}=b"; got != want {
		t.Errorf("after listing again the session routes %s, want %s", got, want)
	}
	if !p.RemoveServer("b") {
		t.Error("RemoveServer(b) = false")
	}
	told("removing b")
	if p.RemoveServer("b") {
		t.Error("removing b twice: true")
	}
	if got, want := routes(), "conn a,mem://a2/doc=a,mem://a2/items/{id}=a"; got != want {
		t.Errorf("after b was removed the session routes %s, want %s", got, want)
	}
	if got := fmt.Sprint(p.Servers()); got != fmt.Sprintf("map[a:%s]", a2URL) || strings.Join(p.serverNames(), ",") != "a" {
		t.Errorf("after removing b: %s, names %v", got, p.serverNames())
	}
	p.PutServer("0", bURL, nil)
	told("adding 0")
	if got := strings.Join(p.serverNames(), ","); got != "0,a" {
		t.Errorf("server names %s, want them sorted: 0,a", got)
	}
	p.RemoveServer("0")
	told("removing 0")
	p.closing.Wait() // the dropped upstream sessions close in the background
	if n := p.UpstreamSessions(); n != 1 {
		t.Errorf("%d upstream sessions, want a's only", n)
	}
}
