package smoke

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Wire constants of MCP Streamable HTTP.
const (
	protocolVersion = "2025-11-25"
	headerSession   = "Mcp-Session-Id"
	headerProtocol  = "Mcp-Protocol-Version"
	maxBody         = 8 << 20 // bytes read of any answer
)

// Client is a minimal MCP Streamable HTTP client that counts and bounds its
// requests: each gets the per-call budget, and no more than
// Config.MaxRequests are ever sent. It holds at most one session of its own,
// opened on first use and closed by Close. Safe for sequential use.
type Client struct {
	cfg Config
	hc  *http.Client

	mu       sync.Mutex
	requests int
	calls    []Call
	nextID   int
	session  string
	version  string // negotiated protocol version
	openErr  error  // why the session could not be opened, once
}

// Call is one HTTP request the client sent, for reports.
type Call struct {
	What    string // e.g. "tools/call docmost_search"
	Status  int
	Latency time.Duration
	Err     error
}

// NewClient returns a client for cfg (defaults applied).
func NewClient(cfg Config) *Client {
	cfg = cfg.withDefaults()
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	return &Client{cfg: cfg, hc: hc}
}

// Requests is the number of requests sent so far.
func (c *Client) Requests() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.requests
}

// Calls lists every request sent so far.
func (c *Client) Calls() []Call {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Call(nil), c.calls...)
}

// Endpoint is the project's MCP endpoint.
func (c *Client) Endpoint() string {
	return strings.TrimRight(c.cfg.URL, "/") + "/projects/" + c.cfg.Project + "/mcp"
}

// Close ends the client's session (DELETE) if it opened one, and closes
// idle connections. Close may be called more than once.
func (c *Client) Close(ctx context.Context) error {
	defer c.hc.CloseIdleConnections()
	c.mu.Lock()
	id := c.session
	c.session = ""
	c.mu.Unlock()
	if id == "" {
		return nil
	}
	status, body, err := c.delete(ctx, id)
	if err != nil {
		return fmt.Errorf("closing session: %w", err)
	}
	if status/100 != 2 {
		return fmt.Errorf("closing session: DELETE answered %d: %s", status, excerpt(body))
	}
	return nil
}

// rpcResponse is a JSON-RPC response.
type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *rpcError       `json:"error"`
}

type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func (e *rpcError) Error() string {
	s := fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message)
	if len(e.Data) > 0 {
		s += " " + excerpt(string(e.Data))
	}
	return s
}

// answer is what one request got back.
type answer struct {
	status  int
	header  http.Header
	body    string       // the raw body (JSON, or the SSE stream read so far)
	rpc     *rpcResponse // the JSON-RPC response, if one came
	latency time.Duration
}

// send sends one request within the budget and records it. method is the
// HTTP method; msg (nil for DELETE) is the JSON-RPC message; session, if
// set, is sent as Mcp-Session-Id. An answer not complete within the budget
// is an error saying so.
func (c *Client) send(ctx context.Context, what, method, session string, msg map[string]any) (answer, error) {
	c.mu.Lock()
	if c.requests >= c.cfg.MaxRequests {
		c.mu.Unlock()
		return answer{}, fmt.Errorf("%s: not sent: the smoke run is bounded to %d requests", what, c.cfg.MaxRequests)
	}
	c.requests++
	version := c.version
	c.mu.Unlock()

	ctx, cancel := context.WithTimeout(ctx, c.cfg.Budget)
	defer cancel()
	var body io.Reader = http.NoBody
	var wantID string
	if msg != nil {
		b, err := json.Marshal(msg)
		if err != nil {
			return answer{}, err
		}
		body = bytes.NewReader(b)
		if id, ok := msg["id"]; ok {
			wantID = fmt.Sprint(id)
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Endpoint(), body)
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Content-Type", "application/json") // also on DELETE, as the clients that broke proxies send it
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.cfg.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.Token)
	}
	if session != "" {
		req.Header.Set(headerSession, session)
	}
	if version != "" {
		req.Header.Set(headerProtocol, version)
	}
	start := time.Now()
	a, err := c.roundTrip(req, wantID)
	a.latency = time.Since(start)
	if err != nil && ctx.Err() != nil {
		err = fmt.Errorf("no answer within the %v budget (after %v): %w", c.cfg.Budget, a.latency.Round(time.Millisecond), err)
	}
	if err == nil && a.latency > c.cfg.Budget {
		err = fmt.Errorf("answered after %v, over the %v budget", a.latency.Round(time.Millisecond), c.cfg.Budget)
	}
	c.record(Call{What: what, Status: a.status, Latency: a.latency, Err: err})
	if err != nil {
		return a, fmt.Errorf("%s %s: %w", what, method, err)
	}
	return a, nil
}

func (c *Client) record(call Call) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, call)
}

// roundTrip sends req and reads the answer: a JSON body, or an SSE stream up
// to the response whose id is wantID.
func (c *Client) roundTrip(req *http.Request, wantID string) (answer, error) {
	resp, err := c.hc.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	a := answer{status: resp.StatusCode, header: resp.Header}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ct == "text/event-stream" {
		return c.readSSE(resp.Body, a, wantID)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	a.body = string(b)
	if err != nil {
		return a, err
	}
	if ct == "application/json" && len(bytes.TrimSpace(b)) > 0 {
		var r rpcResponse
		if json.Unmarshal(b, &r) == nil && r.JSONRPC == "2.0" {
			a.rpc = &r
		}
	}
	return a, nil
}

// readSSE reads events until the JSON-RPC response with id wantID (or any
// response when wantID is empty), or the end of the stream.
func (c *Client) readSSE(r io.Reader, a answer, wantID string) (answer, error) {
	var all strings.Builder
	sc := bufio.NewScanner(io.LimitReader(r, maxBody))
	sc.Buffer(make([]byte, 64<<10), maxBody)
	var data []string
	flush := func() bool {
		if len(data) == 0 {
			return false
		}
		payload := strings.Join(data, "\n")
		data = data[:0]
		var resp rpcResponse
		if json.Unmarshal([]byte(payload), &resp) != nil || resp.JSONRPC != "2.0" || (resp.Result == nil && resp.Error == nil) {
			return false // a notification or a request from the server
		}
		if wantID != "" && strings.Trim(string(resp.ID), `"`) != wantID {
			return false
		}
		a.rpc = &resp
		return true
	}
	for sc.Scan() {
		line := sc.Text()
		all.WriteString(line)
		all.WriteByte('\n')
		switch {
		case line == "":
			if flush() {
				a.body = all.String()
				return a, nil
			}
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
	if flush() {
		a.body = all.String()
		return a, nil
	}
	a.body = all.String()
	if err := sc.Err(); err != nil {
		return a, err
	}
	return a, errors.New("the event stream ended without the response")
}

// rpc sends a JSON-RPC request on session and returns its answer; a
// transport failure or a missing response is an error, a JSON-RPC error is
// returned in the answer.
func (c *Client) rpc(ctx context.Context, what, session, method string, params any) (answer, error) {
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	c.mu.Unlock()
	msg := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	a, err := c.send(ctx, what, http.MethodPost, session, msg)
	if err != nil {
		return a, err
	}
	if a.rpc == nil {
		return a, fmt.Errorf("%s: HTTP %d without a JSON-RPC response: %s", what, a.status, excerpt(a.body))
	}
	return a, nil
}

// open initializes a new session (initialize + notifications/initialized)
// and returns its id.
func (c *Client) open(ctx context.Context) (string, error) {
	a, err := c.rpc(ctx, "initialize", "", "initialize", map[string]any{
		"protocolVersion": protocolVersion,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "mcpchaos-smoke", "version": "0.1.0"},
	})
	if err != nil {
		return "", err
	}
	if a.rpc.Error != nil {
		return "", fmt.Errorf("initialize: %w", a.rpc.Error)
	}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(a.rpc.Result, &res)
	id := a.header.Get(headerSession)
	c.mu.Lock()
	if res.ProtocolVersion != "" {
		c.version = res.ProtocolVersion
	}
	c.mu.Unlock()
	n, err := c.send(ctx, "notifications/initialized", http.MethodPost, id,
		map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	if err != nil {
		return id, err
	}
	if n.status/100 != 2 {
		return id, fmt.Errorf("notifications/initialized answered %d: %s", n.status, excerpt(n.body))
	}
	return id, nil
}

// Session returns the client's own session, opening it on first use. A
// session that could not be opened is not tried again: later checks fail at
// once with the first error, keeping the run short against a broken proxy.
func (c *Client) Session(ctx context.Context) (string, error) {
	c.mu.Lock()
	id, openErr := c.session, c.openErr
	c.mu.Unlock()
	switch {
	case id != "":
		return id, nil
	case openErr != nil:
		return "", fmt.Errorf("no session (opening it failed earlier): %w", openErr)
	}
	id, err := c.open(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.openErr = err
		return "", err
	}
	c.session = id
	return id, nil
}

// delete sends DELETE with Content-Type: application/json and an empty body.
func (c *Client) delete(ctx context.Context, id string) (int, string, error) {
	a, err := c.send(ctx, "DELETE session", http.MethodDelete, id, nil)
	return a.status, a.body, err
}

// toolResult is the part of a tools/call result the checks read.
type toolResult struct {
	IsError bool             `json:"isError"`
	Content []map[string]any `json:"content"`
	Meta    map[string]any   `json:"_meta"`
}

func (r toolResult) text() string {
	var b strings.Builder
	for _, c := range r.Content {
		if t, ok := c["text"].(string); ok {
			b.WriteString(t)
		}
	}
	return b.String()
}

// randomSessionID is an id no server issued: 32 hex digits.
func randomSessionID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func excerpt(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 200 {
		return s[:200] + "…"
	}
	if s == "" {
		return "(empty body)"
	}
	return s
}
