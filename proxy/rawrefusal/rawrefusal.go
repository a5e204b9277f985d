// Package rawrefusal makes the refusals net/http writes by itself JSON-RPC
// errors.
//
// Before a handler runs, net/http answers some requests on its own, straight
// to the connection: headers past MaxHeaderBytes (431), a malformed request
// line or header (400), an unsupported Transfer-Encoding (501), all as
// text/plain with Connection: close. An MCP client reads JSON-RPC errors
// (docs/reliability.md: every refusal is a JSON-RPC body), so a listener
// wrapped here rewrites exactly those canned answers, keeping their status.
package rawrefusal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/mcpchaos/mcpchaos/proxy/trace"
)

// CodeInvalidRequest is JSON-RPC's invalid request.
const CodeInvalidRequest = -32600

// Listener wraps every connection of a listener.
type Listener struct{ net.Listener }

// Accept returns the next connection, wrapped.
func (l Listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &conn{Conn: c}, nil
}

// cannedHeaders is what follows the status line of every answer net/http
// writes by itself (net/http server.go, errorHeaders); the answers of
// handlers always carry a Date header, so never exactly this.
const cannedHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

type conn struct{ net.Conn }

// CloseWrite keeps the half-close the wrapped connection offers.
func (c *conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (c *conn) Write(b []byte) (int, error) {
	if out, ok := Rewrite(b); ok {
		if _, err := c.Conn.Write(out); err != nil {
			return 0, err
		}
		return len(b), nil
	}
	return c.Conn.Write(b)
}

// Rewrite returns the JSON-RPC form of one canned net/http answer, and
// false for anything else.
func Rewrite(b []byte) ([]byte, bool) {
	if len(b) > 4096 || !bytes.HasPrefix(b, []byte("HTTP/1.1 ")) || len(b) < 13 {
		return nil, false
	}
	head, text, found := bytes.Cut(b, []byte(cannedHeaders))
	if !found || bytes.Contains(head, []byte("\r\n")) {
		return nil, false
	}
	status, err := strconv.Atoi(string(head[9:12]))
	if err != nil || status < 400 {
		return nil, false
	}
	code := trace.New()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{
		"code":    CodeInvalidRequest,
		"message": fmt.Sprintf("%s [trace %s]", strings.TrimSpace(string(text)), code),
		"data":    map[string]string{trace.MetaKey: code},
	}})
	return fmt.Appendf(nil, "%s\r\nContent-Type: application/json\r\nX-Content-Type-Options: nosniff\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", head, len(body), body), true
}
