package entry

import (
	"fmt"
	"net/http"

	"github.com/mcpchaos/mcpchaos/proxy/rpcread"
	"github.com/mcpchaos/mcpchaos/proxy/trace"
)

// batchesEnd is the first protocol version without JSON-RPC batches.
const batchesEnd = "2025-06-18"

// CodeInvalidParams is JSON-RPC's invalid params.
const CodeInvalidParams = -32602

// admit decides, from the one reading of the body, whether the request may
// go on; when it may not, it writes the JSON-RPC error and reports false.
// version is the protocol version the request is served under: its header,
// else the one its session negotiated, else 2025-03-26 (the SDK's default).
//
// A batch is refused where its version forbids batches (2025-06-18 and
// later), whenever it holds an initialize (an initialize opens a session,
// and sessions are opened, counted and claimed one request at a time), and
// past MCPCTL_BATCH_MAX messages. Every message is held to the name limits.
func (h *Handler) admit(w http.ResponseWriter, rd rpcread.Reading, version string) bool {
	if rd.Batch {
		var why string
		switch {
		case int64(rd.Len) > h.o.BatchMax:
			why = fmt.Sprintf("a batch of %d messages exceeds %d (knob MCPCTL_BATCH_MAX); send fewer at once", rd.Len, h.o.BatchMax)
		case version >= batchesEnd:
			why = fmt.Sprintf("JSON-RPC batches do not exist in protocol %s (from %s on); send the messages one by one", version, batchesEnd)
		case rd.HasMethod("initialize"):
			why = "an initialize cannot be part of a batch; send it alone"
		}
		if why != "" {
			writeRPCError(w, http.StatusBadRequest, CodeInvalidRequest, trace.New(), why)
			return false
		}
	}
	for _, m := range rd.Messages {
		if why := h.badName(m); why != "" {
			writeRPCError(w, http.StatusBadRequest, CodeInvalidParams, trace.New(), why)
			return false
		}
	}
	return true
}

// badName says what is wrong with the name a tools/call, a prompts/get or
// a completion/complete of a prompt's argument names ("" if nothing): the
// MCP spec (2025-11-25) holds a tool's name to 1-128 characters of A-Z a-z
// 0-9 _ - . (MCPCTL_MAX_NAME_BYTES), and a prompt's name is held to the same
// length wherever a request names one.
func (h *Handler) badName(m rpcread.Message) string {
	if !m.Request || (m.Method != "tools/call" && m.Method != "prompts/get" && m.Method != "completion/complete") {
		return ""
	}
	var p struct {
		Name string `json:"name"`
		Ref  struct {
			Type string `json:"type"`
			Name string `json:"name"`
		} `json:"ref"`
	}
	if rpcread.Decode(m.Params, &p) != nil {
		return "" // the SDK answers malformed params itself
	}
	what := "tool"
	switch m.Method {
	case "prompts/get":
		what = "prompt"
	case "completion/complete":
		if p.Ref.Type != "ref/prompt" {
			return "" // a resource template is named by its URI
		}
		what, p.Name = "prompt", p.Ref.Name
	}
	if int64(len(p.Name)) > h.o.MaxNameBytes {
		return fmt.Sprintf("the %s name is %d bytes, longer than %d (knob MCPCTL_MAX_NAME_BYTES)", what, len(p.Name), h.o.MaxNameBytes)
	}
	if what == "tool" && !ValidToolName(p.Name) {
		return fmt.Sprintf("the tool name %q is not 1 to %d of the characters A-Z a-z 0-9 _ - . (MCP spec; knob MCPCTL_MAX_NAME_BYTES)", p.Name, h.o.MaxNameBytes)
	}
	return ""
}

// ValidToolName reports whether name has only the characters the MCP spec
// allows in a tool name and at least one.
func ValidToolName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// servedVersion is the protocol version a request is served under.
func servedVersion(r *http.Request, negotiated string) string {
	if v := r.Header.Get("Mcp-Protocol-Version"); v != "" {
		return v
	}
	if negotiated != "" {
		return negotiated
	}
	return "2025-03-26"
}
