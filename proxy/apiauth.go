package proxy

import (
	"context"
	"fmt"
	"mime"
	"net/http"
	"strings"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/entry"
	"github.com/mcpchaos/mcpchaos/proxy/trace"
)

type callerKey struct{}

// caller is who sent an /api/v1 request.
type caller struct {
	user  string
	admin bool
}

// api guards an /api/v1 handler: when users are configured, the request must
// carry one of their bearer tokens (else 401); the handler finds the caller
// with callerOf. With no users configured the proxy has one local user, who
// sees everything.
func (p *Proxy) api(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c := caller{admin: true}
		if len(p.cfg.Users) > 0 {
			user, ok := entry.Authenticate(r, p.users)
			if !ok {
				w.Header().Set("WWW-Authenticate", `Bearer realm="mcplocal"`)
				writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "this proxy has users: send one's bearer token (Authorization: Bearer <token>)"})
				return
			}
			c = caller{user: user, admin: p.admins[user]}
		}
		h(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, c)))
	}
}

func callerOf(ctx context.Context) caller {
	c, _ := ctx.Value(callerKey{}).(caller)
	return c
}

// visible keeps the rows the caller may read: an admin (or the one local
// user) reads every row, any other user only the rows that name them. A
// trace code or session id someone else handed over reveals nothing more.
func (p *Proxy) visible(ctx context.Context, rows []audit.Row) []audit.Row {
	c := callerOf(ctx)
	if c.admin {
		return rows
	}
	out := rows[:0:0]
	for _, r := range rows {
		if r.User == c.user {
			out = append(out, r)
		}
	}
	return out
}

// requireJSON refuses a body that is not application/json (415): a chat turn
// spends LLM credit, and a cross-site HTML form can only post form or text
// bodies.
func requireJSON(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
			writeJSON(w, http.StatusUnsupportedMediaType, map[string]string{"error": "Content-Type must be application/json"})
			return
		}
		h.ServeHTTP(w, r)
	})
}

// refuseOrigin answers a request refused for its Host or Origin: a JSON-RPC
// error on the MCP endpoints, {"error": ...} on the others.
func refuseOrigin(w http.ResponseWriter, r *http.Request, status int, msg string) {
	if !strings.HasPrefix(r.URL.Path, "/projects/") {
		writeJSON(w, status, map[string]string{"error": msg})
		return
	}
	code := trace.New()
	writeJSON(w, status, map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{
		"code": entry.CodeInvalidRequest, "message": fmt.Sprintf("%s [trace %s]", msg, code), "data": map[string]string{trace.MetaKey: code},
	}})
}
