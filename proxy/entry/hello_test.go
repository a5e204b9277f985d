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
