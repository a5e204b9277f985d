package entry

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/rpcread"
)

// MaxClientInfoBytes bounds each of the clientInfo fields a session record
// keeps (name, title, version): what a client says of itself is its to
// choose, and the record must not grow with it.
const MaxClientInfoBytes = 256

// hello is what a session record keeps of its client's initialize
// (audit.SessionRecord.Client), and what the initialize replayed for a
// recreated session says again.
type hello struct {
	Capabilities *capabilities       `json:"capabilities"`
	ClientInfo   *mcp.Implementation `json:"clientInfo"`
}

// capabilities are the client's capabilities as its initialize sent them.
// The SDK's ClientCapabilities keeps roots in a struct field that
// encoding/json always writes ("roots":{} for a client that offered none);
// the pointer here, shallower, wins over it both ways, so roots are kept
// exactly when the client offered them.
type capabilities struct {
	mcp.ClientCapabilities
	Roots *mcp.RootCapabilities `json:"roots,omitempty"`
}

// clientHello returns what the record keeps of the initialize request body,
// read as the SDK reads it (case-sensitive keys):
// the client's standard capabilities (sampling, elicitation, roots, ...:
// every field the SDK knows, so its size is bounded by their shape) without
// the free-form experimental and extensions maps, and clientInfo's name,
// title and version, each cut at MaxClientInfoBytes. "" when the body says
// neither.
func clientHello(body []byte) string {
	var req struct {
		Params hello
	}
	m, ok := rpcread.Read(body).Single()
	if !ok || rpcread.Decode(m.Params, &req.Params) != nil {
		return ""
	}
	out := hello{Capabilities: &capabilities{}, ClientInfo: &mcp.Implementation{}}
	if c := req.Params.Capabilities; c != nil {
		cp := *c
		cp.Experimental, cp.Extensions = nil, nil
		out.Capabilities = &cp
	}
	if ci := req.Params.ClientInfo; ci != nil {
		out.ClientInfo = &mcp.Implementation{Name: cut(ci.Name), Title: cut(ci.Title), Version: cut(ci.Version)}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return ""
	}
	return string(b)
}

// cut keeps at most MaxClientInfoBytes of s, ending on a whole character: a
// split one would come back from the record as a replacement character, past
// the bound.
func cut(s string) string {
	if len(s) <= MaxClientInfoBytes {
		return s
	}
	n := MaxClientInfoBytes
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// replayedInitialize is the initialize request a recreated session's
// handshake replays: the protocol version the request carried, and the
// client's capabilities and clientInfo from its record (empty ones, and a
// clientInfo naming the recreation, for a record that has none).
func replayedInitialize(pv, client string) string {
	params := map[string]any{
		"protocolVersion": pv,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "recreated-session", "version": "0"},
	}
	var h struct {
		Capabilities json.RawMessage `json:"capabilities"`
		ClientInfo   json.RawMessage `json:"clientInfo"`
	}
	if client != "" && json.Unmarshal([]byte(client), &h) == nil {
		if len(h.Capabilities) > 0 && string(h.Capabilities) != "null" {
			params["capabilities"] = h.Capabilities
		}
		if len(h.ClientInfo) > 0 && string(h.ClientInfo) != "null" {
			params["clientInfo"] = h.ClientInfo
		}
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "mcplocal-recreate", "method": "initialize", "params": params})
	return string(b)
}
