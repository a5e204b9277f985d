package proxy

import (
	"encoding/json"
	"fmt"

	"github.com/mcpchaos/mcpchaos/proxy/deadline"
	"github.com/mcpchaos/mcpchaos/proxy/trace"
)

// refuseConn is what a connection past MCPCTL_CONNS_MAX is sent before the
// proxy closes it (proxy/lazyaccept): a whole HTTP 503 with a JSON-RPC error
// naming the knob, written before the client's request is read, so that any
// client, MCP or not, reads why; Connection: close tells it not to reuse it.
func refuseConn(max int64) func() []byte {
	return func() []byte {
		code := trace.New()
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{
			"code":    deadline.CodeRequestFailed,
			"message": fmt.Sprintf("the proxy holds its maximum of %d open connections (MCPCTL_CONNS_MAX); retry shortly [trace %s]", max, code),
			"data":    map[string]string{trace.MetaKey: code},
		}})
		return fmt.Appendf(nil, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: %d\r\nRetry-After: 1\r\nConnection: close\r\n\r\n%s", len(body), body)
	}
}
