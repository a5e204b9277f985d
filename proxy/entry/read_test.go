package entry

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/session"
)

// An initialize the go-sdk serves is an initialize to the entry, whatever
// other keys differ from "method" only in case: it is counted by the caps
// and its owner recorded, like any initialize.
func TestADisguisedInitializeMeetsTheCaps(t *testing.T) {
	in := start(t, audit.NewMemory(), Options{}, session.Limits{MaxPerUser: 1})
	initAs(t, in.srv, "alice-token")
	disguised := strings.Replace(initBody, `"method":"initialize"`, `"method":"initialize","METHOD":"x"`, 1)
	a := send(t, in.srv, "POST", with(map[string]string{"Authorization": "Bearer alice-token"}), disguised)
	if a.status != 429 || !strings.Contains(a.msg, session.KnobPerUser) {
		t.Fatalf(`an initialize with "METHOD":"x" past alice's cap: %d %s, want 429 naming %s`, a.status, a.body, session.KnobPerUser)
	}
}

// Batches: refused where the version forbids them, with an initialize, and
// past MCPCTL_BATCH_MAX; a small batch on a 2025-03-26 session is served.
func TestBatchesAreRefusedOrBoundedByTheReading(t *testing.T) {
	in := start(t, audit.NewMemory(), Options{BatchMax: 2}, session.Limits{})
	alice := map[string]string{"Authorization": "Bearer alice-token"}
	old := strings.Replace(initBody, "2025-11-25", "2025-03-26", 1)
	a := send(t, in.srv, "POST", with(alice), old)
	id := a.header.Get("Mcp-Session-Id")
	if a.status != 200 || id == "" {
		t.Fatalf("initialize 2025-03-26: %d %s", a.status, a.body)
	}
	on := func(version string) map[string]string {
		h := with(map[string]string{"Authorization": "Bearer alice-token", "Mcp-Session-Id": id})
		delete(h, "Mcp-Protocol-Version")
		if version != "" {
			h["Mcp-Protocol-Version"] = version
		}
		return h
	}
	send(t, in.srv, "POST", on("2025-03-26"), `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	ping := func(id int) string { return `{"jsonrpc":"2.0","id":` + string(rune('0'+id)) + `,"method":"ping"}` }
	if a := send(t, in.srv, "POST", on("2025-03-26"), "["+ping(1)+","+ping(2)+"]"); a.status != 200 || !strings.Contains(a.body, `"id":1`) || !strings.Contains(a.body, `"id":2`) {
		t.Errorf("a batch of 2 pings on a 2025-03-26 session: %d %s", a.status, a.body)
	}
	for what, c := range map[string]struct{ version, body, want string }{
		"past MCPCTL_BATCH_MAX": {"2025-03-26", "[" + ping(1) + "," + ping(2) + "," + ping(3) + "]", "MCPCTL_BATCH_MAX"},
		"with an initialize":    {"2025-03-26", "[" + ping(1) + "," + old + "]", "initialize"},
		"on 2025-06-18":         {"2025-06-18", "[" + ping(1) + "]", "2025-06-18"},
	} {
		if a := send(t, in.srv, "POST", on(c.version), c.body); a.status != 400 || a.code != CodeInvalidRequest || !strings.Contains(a.msg, c.want) {
			t.Errorf("a batch %s: %d %s, want 400 %d naming %s", what, a.status, a.body, CodeInvalidRequest, c.want)
		}
	}
	// A session that negotiated 2025-11-25 has no batches, header or not.
	cur := initAs(t, in.srv, "alice-token")
	h := with(map[string]string{"Authorization": "Bearer alice-token", "Mcp-Session-Id": cur})
	delete(h, "Mcp-Protocol-Version")
	if a := send(t, in.srv, "POST", h, "["+ping(1)+"]"); a.status != 400 || a.code != CodeInvalidRequest {
		t.Errorf("a batch on a 2025-11-25 session without the header: %d %s, want 400", a.status, a.body)
	}
	// Without a session: a batched initialize opens nothing.
	if a := send(t, in.srv, "POST", with(alice), "["+old+"]"); a.status != 400 || a.header.Get("Mcp-Session-Id") != "" {
		t.Errorf("a batched initialize: %d %s, want 400 and no session", a.status, a.body)
	}
}

// Tool and prompt names are held to the MCP spec's limits at the entry.
func TestNamesAreHeldToTheSpecsLimits(t *testing.T) {
	in := start(t, audit.NewMemory(), Options{}, session.Limits{})
	id := initAs(t, in.srv, "alice-token")
	call := func(method, name string) rpcAnswer {
		return send(t, in.srv, "POST", onSession("alice-token", id), `{"jsonrpc":"2.0","id":3,"method":"`+method+`","params":{"name":"`+name+`","arguments":{}}}`)
	}
	for _, c := range []struct{ method, name string }{
		{"tools/call", strings.Repeat("t", 129)}, {"tools/call", "a b"}, {"tools/call", "a/b"}, {"tools/call", ""},
		{"prompts/get", strings.Repeat("p", 129)},
	} {
		if a := call(c.method, c.name); a.status != 400 || a.code != CodeInvalidParams || !strings.Contains(a.msg, "MCPCTL_MAX_NAME_BYTES") {
			t.Errorf("%s named %q: %d %s, want 400 %d naming MCPCTL_MAX_NAME_BYTES", c.method, c.name, a.status, excerptOf(a.body), CodeInvalidParams)
		}
	}
	if a := call("tools/call", strings.Repeat("t", 128)); a.status != 200 {
		t.Errorf("a 128-byte tool name: %d %s, want it served", a.status, excerptOf(a.body))
	}
}

// Ids the SDK would rewrite come back as sent.
func TestIDsComeBackByteForByte(t *testing.T) {
	in := start(t, audit.NewMemory(), Options{}, session.Limits{})
	id := initAs(t, in.srv, "alice-token")
	for _, rid := range []string{`123456789012345678901234567890`, `1.5`, `1e3`, `-0`, `"\u0041b"`, `"x"`, `42`} {
		a := send(t, in.srv, "POST", onSession("alice-token", id), `{"jsonrpc":"2.0","id":`+rid+`,"method":"ping"}`)
		if a.status != 200 || !strings.Contains(a.body, `"id":`+rid+`,`) {
			t.Errorf("ping with id %s: %d %s", rid, a.status, a.body)
		}
	}
}

// A token that is no user's is refused on a project that serves anonymous
// requests too: it never becomes an anonymous request.
func TestAWrongTokenIsRefusedOnAnOpenProject(t *testing.T) {
	in := start(t, audit.NewMemory(), Options{}, session.Limits{})
	if in.h.o.Projects["p"].RequireAuth {
		t.Fatal("project p requires a token here: the test needs an open project")
	}
	a := send(t, in.srv, "POST", with(map[string]string{"Authorization": "Bearer nobodys-token"}), initBody)
	if a.status != 401 || a.ct != "application/json" {
		t.Fatalf("a wrong token on an open project: %d %s, want a 401 JSON-RPC error", a.status, a.body)
	}
	if a := send(t, in.srv, "POST", with(nil), initBody); a.status != 200 {
		t.Fatalf("no token on an open project: %d %s, want it served", a.status, a.body)
	}
}

func excerptOf(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// TestEveryNameARequestCarriesIsHeld: each place a request names a tool or a
// prompt (tools/call's name, prompts/get's name, and completion/complete's
// ref/prompt name) is held to MCPCTL_MAX_NAME_BYTES on its own: one byte
// over is a JSON-RPC error naming the knob, the limit itself is served.
func TestEveryNameARequestCarriesIsHeld(t *testing.T) {
	in := start(t, audit.NewMemory(), Options{}, session.Limits{})
	id := initAs(t, in.srv, "alice-token")
	for _, c := range []struct{ where, params string }{
		{"tools/call", `{"name":"%s","arguments":{}}`},
		{"prompts/get", `{"name":"%s","arguments":{}}`},
		{"completion/complete", `{"ref":{"type":"ref/prompt","name":"%s"},"argument":{"name":"a","value":"b"}}`},
	} {
		for _, n := range []int{129, 128} {
			name := strings.Repeat("n", n)
			a := send(t, in.srv, "POST", onSession("alice-token", id),
				`{"jsonrpc":"2.0","id":3,"method":"`+c.where+`","params":`+fmt.Sprintf(c.params, name)+`}`)
			refused := a.status == 400 && a.code == CodeInvalidParams && strings.Contains(a.msg, "MCPCTL_MAX_NAME_BYTES")
			if refused != (n > 128) {
				t.Errorf("%s naming %d bytes: %d %s, refused %v, want refused %v", c.where, n, a.status, excerptOf(a.body), refused, n > 128)
			}
		}
	}
}
