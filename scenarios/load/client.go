// Package load is a raw Streamable HTTP MCP client for load: it speaks just
// enough of the protocol (initialize, tools/call, DELETE) over plain
// net/http, with no SDK in between, so the client's own cost per call is
// small and the same for every target a benchmark or soak compares.
package load

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/trace"
)

// ProtocolVersion is the MCP protocol version the client asks for.
const ProtocolVersion = "2025-06-18"

// maxBody bounds one response body the client reads (a tool result).
const maxBody = 16 << 20

// NewHTTPClient returns an HTTP client for maxConns concurrent sessions
// against loopback targets: keep-alive connections enough for all of them,
// so a benchmark measures calls, not TCP handshakes.
func NewHTTPClient(maxConns int) *http.Client {
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConns:        maxConns * 2,
		MaxIdleConnsPerHost: maxConns * 2,
		IdleConnTimeout:     30 * time.Second,
		DisableCompression:  true,
	}
	return &http.Client{Transport: tr}
}

// Session is one MCP session over Streamable HTTP. A Session is used by one
// goroutine at a time.
type Session struct {
	HTTP  *http.Client
	URL   string // the MCP endpoint
	Token string // bearer token; "" sends none
	ID    string // Mcp-Session-Id, set by Initialize
	// Stateless accepts a server that issues no Mcp-Session-Id (the MCP
	// spec allows it): Initialize succeeds and requests carry no id.
	// Otherwise a missing id fails Initialize.
	Stateless bool
	next      atomic.Int64
	// stopListening ends the standalone stream Listen opened.
	stopListening context.CancelFunc
}

// Result is what one tools/call came back with.
type Result struct {
	// IsError is the result's isError.
	IsError bool
	// Text is the text content, joined.
	Text string
	// Trace is the trace code in _meta (mcplocal's), "" if none.
	Trace string
	// Status is the HTTP status.
	Status int
}

// RPCError is a JSON-RPC error answer: the request was answered, with an error.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

// HTTPError is a non-2xx answer without a JSON-RPC body.
type HTTPError struct {
	Status int
	Body   string
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("HTTP %d: %s", e.Status, strings.TrimSpace(e.Body))
}

// Answered reports whether err still means the server answered the request
// (a JSON-RPC error or an HTTP error status), as opposed to a transport
// failure or the client giving up.
func Answered(err error) bool {
	var rpc *RPCError
	var h *HTTPError
	return err == nil || errors.As(err, &rpc) || errors.As(err, &h)
}

// Initialize opens the session: initialize, then notifications/initialized.
func (s *Session) Initialize(ctx context.Context) error {
	params := map[string]any{
		"protocolVersion": ProtocolVersion,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "mcpchaos-load", "version": "1"},
	}
	if _, _, err := s.rpc(ctx, "initialize", params, true); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	if s.ID == "" && !s.Stateless {
		return errors.New("initialize: the server sent no Mcp-Session-Id")
	}
	if _, _, err := s.rpc(ctx, "notifications/initialized", nil, false); err != nil {
		return fmt.Errorf("notifications/initialized: %w", err)
	}
	return nil
}

// CallTool sends tools/call name(args) and waits for its answer.
func (s *Session) CallTool(ctx context.Context, name string, args map[string]any) (Result, error) {
	raw, status, err := s.rpc(ctx, "tools/call", map[string]any{"name": name, "arguments": args}, true)
	if err != nil {
		return Result{Status: status}, err
	}
	var r struct {
		IsError bool `json:"isError"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		Meta map[string]any `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return Result{Status: status}, fmt.Errorf("tools/call result: %w", err)
	}
	out := Result{IsError: r.IsError, Status: status}
	var texts []string
	for _, c := range r.Content {
		if c.Type == "text" {
			texts = append(texts, c.Text)
		}
	}
	out.Text = strings.Join(texts, "\n")
	if v, ok := r.Meta[trace.MetaKey].(string); ok {
		out.Trace = v
	}
	return out, nil
}

// Listen opens the session's standalone stream (a GET the server holds
// open for what it sends outside any request), as the go-sdk and TypeScript
// clients do right after initialize, and returns once the server accepted
// it (HTTP 200). The stream is read, and what arrives discarded, until Close.
func (s *Session) Listen(ctx context.Context) error {
	lctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(lctx, http.MethodGet, s.URL, nil)
	if err != nil {
		cancel()
		return err
	}
	s.headers(req)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Del("Content-Type")
	type answer struct {
		resp *http.Response
		err  error
	}
	got := make(chan answer, 1)
	go func() {
		resp, err := s.HTTP.Do(req)
		got <- answer{resp, err}
	}()
	var a answer
	select {
	case a = <-got:
	case <-ctx.Done():
		cancel()
		return ctx.Err()
	}
	if a.err != nil {
		cancel()
		return fmt.Errorf("standalone stream: %w", a.err)
	}
	if a.resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(a.resp.Body, 4<<10))
		a.resp.Body.Close()
		cancel()
		return fmt.Errorf("standalone stream: %w", &HTTPError{Status: a.resp.StatusCode, Body: string(b)})
	}
	s.stopListening = cancel
	go func() {
		defer a.resp.Body.Close()
		_, _ = io.Copy(io.Discard, a.resp.Body)
	}()
	return nil
}

// Close ends the session with DELETE (Content-Type application/json, empty body).
func (s *Session) Close(ctx context.Context) error {
	if s.stopListening != nil {
		s.stopListening()
		s.stopListening = nil
	}
	if s.ID == "" {
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, s.URL, nil)
	if err != nil {
		return err
	}
	s.headers(req)
	resp, err := s.HTTP.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxBody))
	resp.Body.Close()
	s.ID = ""
	return nil
}

func (s *Session) headers(req *http.Request) {
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", ProtocolVersion)
	if s.ID != "" {
		req.Header.Set("Mcp-Session-Id", s.ID)
	}
	if s.Token != "" {
		req.Header.Set("Authorization", "Bearer "+s.Token)
	}
}

// rpc posts one message. For a request (wantAnswer) it returns the result of
// the response whose id matches; for a notification it only checks the status.
func (s *Session) rpc(ctx context.Context, method string, params any, wantAnswer bool) (json.RawMessage, int, error) {
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		msg["params"] = params
	}
	var id int64
	if wantAnswer {
		id = s.next.Add(1)
		msg["id"] = id
	}
	body, err := json.Marshal(msg)
	if err != nil {
		return nil, 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL, bytes.NewReader(body))
	if err != nil {
		return nil, 0, err
	}
	s.headers(req)
	resp, err := s.HTTP.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" && method == "initialize" {
		s.ID = sid
	}
	if !wantAnswer {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxBody))
		if resp.StatusCode/100 != 2 {
			return nil, resp.StatusCode, &HTTPError{Status: resp.StatusCode, Body: excerpt(b)}
		}
		return nil, resp.StatusCode, nil
	}
	var raw []byte
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		raw, err = readEvent(resp.Body, id)
	} else {
		raw, err = io.ReadAll(io.LimitReader(resp.Body, maxBody))
	}
	if err != nil {
		return nil, resp.StatusCode, err
	}
	var answer struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *RPCError       `json:"error"`
	}
	if jerr := json.Unmarshal(raw, &answer); jerr != nil || (answer.Result == nil && answer.Error == nil) {
		if resp.StatusCode/100 != 2 {
			return nil, resp.StatusCode, &HTTPError{Status: resp.StatusCode, Body: excerpt(raw)}
		}
		return nil, resp.StatusCode, fmt.Errorf("not a JSON-RPC answer (HTTP %d): %s", resp.StatusCode, excerpt(raw))
	}
	if answer.Error != nil {
		return nil, resp.StatusCode, answer.Error
	}
	return answer.Result, resp.StatusCode, nil
}

// readEvent reads an SSE stream until a message event carrying the answer
// to id, and returns its data.
func readEvent(r io.Reader, id int64) ([]byte, error) {
	sc := bufio.NewScanner(io.LimitReader(r, maxBody))
	sc.Buffer(make([]byte, 64<<10), maxBody)
	want := strconv.FormatInt(id, 10)
	var data []byte
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case bytes.HasPrefix(line, []byte("data:")):
			if len(data) > 0 { // an event's data lines are joined with newlines
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))...)
		case len(line) == 0 && len(data) > 0:
			var probe struct {
				ID json.RawMessage `json:"id"`
			}
			if json.Unmarshal(data, &probe) == nil && string(probe.ID) == want {
				return data, nil
			}
			data = nil
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(data) > 0 {
		return data, nil
	}
	return nil, io.ErrUnexpectedEOF
}

func excerpt(b []byte) string {
	const n = 200
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// Notify posts one notification (no answer expected) on the session. It
// may be called while a CallTool of the session waits for its answer: that
// is how a client sends notifications/cancelled.
func (s *Session) Notify(ctx context.Context, method string, params any) error {
	_, _, err := s.rpc(ctx, method, params, false)
	return err
}

// LastID is the JSON-RPC id of the latest request the session sent.
func (s *Session) LastID() int64 { return s.next.Load() }
