package proxy

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"syscall"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/deadline"
	"github.com/mcpchaos/mcpchaos/proxy/trace"
)

// refuseConn is what a connection past MCPCTL_CONNS_MAX is sent before the
// proxy closes it (proxy/lazyaccept): a whole HTTP 503 with a JSON-RPC error
// naming the knob, written before the client's request is read, so that any
// client, MCP or not, reads why; Connection: close tells it not to reuse it.
// Refusals are logged, at most one line a second with the count of refusals
// since the start, so that a flood is seen without flooding the log.
func refuseConn(max int64, log *slog.Logger) func() []byte {
	var mu sync.Mutex
	var last time.Time
	n := 0
	return func() []byte {
		code := trace.New()
		mu.Lock()
		n++
		if now := time.Now(); now.Sub(last) >= time.Second {
			log.Warn("connection refused: the proxy holds its maximum of open connections (MCPCTL_CONNS_MAX)", "max", max, "refused_since_start", n, "trace", code)
			last = now
		}
		mu.Unlock()
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{
			"code":    deadline.CodeRequestFailed,
			"message": fmt.Sprintf("the proxy holds its maximum of %d open connections (MCPCTL_CONNS_MAX); retry shortly [trace %s]", max, code),
			"data":    map[string]string{trace.MetaKey: code},
		}})
		return fmt.Appendf(nil, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: %d\r\nRetry-After: 1\r\nConnection: close\r\n\r\n%s", len(body), body)
	}
}

// ClampConns returns the connection cap in force: MCPCTL_CONNS_MAX, but
// below the process's limit of open files (fdLimit; 0: unknown), leaving a
// fifth of it (at least 64) for upstream connections, the audit store and
// the log. A cap at the fd limit is no cap: accept fails first, and the
// silent connections that should be closed to make room never are.
// clamped says whether the knob was lowered.
func ClampConns(knob int64, fdLimit uint64) (limit int64, clamped bool) {
	if fdLimit == 0 {
		return knob, false
	}
	reserve := max(64, fdLimit/5)
	if fdLimit <= reserve {
		return 1, knob > 1
	}
	if room := int64(fdLimit - reserve); knob > room {
		return room, true
	}
	return knob, false
}

// fdLimit is the process's soft limit of open files (0 when unknown).
func fdLimit() uint64 {
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl) != nil {
		return 0
	}
	return rl.Cur
}
