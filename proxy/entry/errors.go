package entry

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/mcpchaos/mcpchaos/proxy/deadline"
	"github.com/mcpchaos/mcpchaos/proxy/trace"
)

// JSON-RPC 2.0 error codes the entry answers with.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInternal       = -32603
)

// writeError writes a JSON-RPC error body with id null and the proxy's own
// code (-32001), quoting the trace code.
func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeRPCError(w, status, deadline.CodeRequestFailed, code, msg)
}

// writeRPCError writes a JSON-RPC error body with id null, error code rpc
// and the trace code in the message and in error.data.
func writeRPCError(w http.ResponseWriter, status, rpc int, code, msg string) {
	writeRPCErrorTo(w, status, rpc, nil, code, msg)
}

// writeRPCErrorTo is writeRPCError answering the request whose id is id
// (JSON-RPC 2.0: the id is null only where it could not be read).
func writeRPCErrorTo(w http.ResponseWriter, status, rpc int, id json.RawMessage, code, msg string) {
	var rid any // null
	if len(id) > 0 {
		rid = id
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Del("Content-Length")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"jsonrpc": "2.0",
		"id":      rid,
		"error": map[string]any{
			"code":    rpc,
			"message": fmt.Sprintf("%s [trace %s]", msg, code),
			"data":    map[string]string{trace.MetaKey: code},
		},
	})
}

// WriteError is writeError for what stands in front of the entry (the
// proxy's stop gate): the same JSON-RPC error shape, id null, trace code
// quoted.
func WriteError(w http.ResponseWriter, status int, code, msg string) {
	writeError(w, status, code, msg)
}
