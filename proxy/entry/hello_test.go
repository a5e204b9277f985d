package entry

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestClientHelloKeepsCapabilitiesAndIsBounded: the record keeps what the
// replayed initialize needs (sampling, elicitation, roots, clientInfo) and
// no more than a bounded amount of what a client chose to send.
func TestClientHelloKeepsCapabilitiesAndIsBounded(t *testing.T) {
	huge := strings.Repeat("x", 1<<20)
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",
		"capabilities":{"sampling":{},"elicitation":{},"roots":{"listChanged":true},"experimental":{"big":"` + huge + `"},"extensions":{"v/x":{"big":"` + huge + `"}}},
		"clientInfo":{"name":"` + huge + `","version":"1.2","websiteUrl":"https://example.com/` + huge + `"}}}`
	got := clientHello([]byte(body))
	if len(got) > 4*MaxClientInfoBytes+512 {
		t.Fatalf("the record keeps %d bytes of a client's initialize, want it bounded", len(got))
	}
	var h struct {
		Capabilities map[string]any `json:"capabilities"`
		ClientInfo   map[string]any `json:"clientInfo"`
	}
	if err := json.Unmarshal([]byte(got), &h); err != nil {
		t.Fatalf("record %q: %v", got, err)
	}
	for _, c := range []string{"sampling", "elicitation", "roots"} {
		if _, ok := h.Capabilities[c]; !ok {
			t.Errorf("capability %s dropped: %s", c, got)
		}
	}
	if h.ClientInfo["version"] != "1.2" || len(h.ClientInfo["name"].(string)) != MaxClientInfoBytes {
		t.Errorf("clientInfo kept as %v, want version 1.2 and the name cut at %d bytes", h.ClientInfo, MaxClientInfoBytes)
	}
	init := replayedInitialize("2025-11-25", got)
	if !strings.Contains(init, `"sampling":{}`) || !strings.Contains(init, `"version":"1.2"`) {
		t.Errorf("replayed initialize %s lacks the recorded capabilities or clientInfo", init)
	}
	if old := replayedInitialize("2025-03-26", ""); !strings.Contains(old, `"capabilities":{}`) || !strings.Contains(old, "recreated-session") {
		t.Errorf("a record without a client replays %s, want empty capabilities", old)
	}
}

// TestClientHelloOffersOnlyWhatTheClientOffered: the replayed initialize of a
// recreated session offers upstream exactly the capabilities its client
// offered. A client without roots must not gain them: an upstream would then
// ask it roots/list, which it cannot answer. (encoding/json never omits a
// struct field, so the SDK's V1 capabilities type always writes "roots".)
func TestClientHelloOffersOnlyWhatTheClientOffered(t *testing.T) {
	for _, tc := range []struct {
		name, caps string
		want       map[string]string // capability -> its JSON in the replay; absent: not offered
	}{
		{"nothing", `{}`, map[string]string{}},
		{"sampling only", `{"sampling":{}}`, map[string]string{"sampling": `{}`}},
		{"roots", `{"roots":{}}`, map[string]string{"roots": `{}`}},
		{"roots with listChanged", `{"roots":{"listChanged":true}}`, map[string]string{"roots": `{"listChanged":true}`}},
		{"elicitation and roots", `{"elicitation":{},"roots":{"listChanged":true}}`, map[string]string{"elicitation": `{}`, "roots": `{"listChanged":true}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":` + tc.caps + `,"clientInfo":{"name":"c","version":"1"}}}`
			init := replayedInitialize("2025-11-25", clientHello([]byte(body)))
			var req struct {
				Params struct {
					Capabilities map[string]json.RawMessage `json:"capabilities"`
				} `json:"params"`
			}
			if err := json.Unmarshal([]byte(init), &req); err != nil {
				t.Fatalf("replayed initialize %s: %v", init, err)
			}
			got := map[string]string{}
			for k, v := range req.Params.Capabilities {
				got[k] = string(v)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("the replay offers %v, the client offered %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("capability %s replayed as %q, the client offered %q (replay %s)", k, got[k], v, init)
				}
			}
		})
	}
}

// TestEveryClientInfoFieldIsCut: each field of clientInfo the record keeps
// (name, title, version) is cut at MaxClientInfoBytes on its own, the others
// kept as sent, whatever their characters: a cut never splits a character
// (the record stays valid UTF-8 and within the bound).
func TestEveryClientInfoFieldIsCut(t *testing.T) {
	fields := []string{"name", "title", "version"}
	for _, long := range fields {
		for _, unit := range []string{"x", "é", "€", "😀"} {
			info := map[string]string{}
			for _, f := range fields {
				info[f] = f + "-as-sent"
			}
			info[long] = strings.Repeat(unit, 2*MaxClientInfoBytes)
			ci, _ := json.Marshal(info)
			got := clientHello([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":` + string(ci) + `}}`))
			var h struct {
				ClientInfo map[string]string `json:"clientInfo"`
			}
			if err := json.Unmarshal([]byte(got), &h); err != nil {
				t.Fatalf("%s of %q: record %q: %v", long, unit, got, err)
			}
			for _, f := range fields {
				v := h.ClientInfo[f]
				if f != long {
					if v != f+"-as-sent" {
						t.Errorf("a long %s changed %s to %q", long, f, v)
					}
					continue
				}
				if len(v) > MaxClientInfoBytes || len(v) <= MaxClientInfoBytes-len(unit) || strings.Trim(v, unit) != "" {
					t.Errorf("clientInfo.%s of %q kept as %d bytes %q, want whole characters and at most %d bytes", f, unit, len(v), excerpt(v), MaxClientInfoBytes)
				}
			}
		}
	}
}

func excerpt(s string) string {
	if len(s) > 24 {
		return s[:12] + "…" + s[len(s)-12:]
	}
	return s
}
