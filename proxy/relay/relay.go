// Package relay is the raw JSON-RPC relay of tools/call: the wire half of
// forwarding one call without the go-sdk decoding it on either hop.
//
// It reads only a request's envelope (id, method, the tool's name, the
// progress token), builds the upstream's request by splicing in the
// upstream's tool name and an id of its own, reads the upstream's answer (a
// JSON body or an SSE stream) message by message, and rewrites the answer for
// the client: its id back to the client's, the trace code stamped into the
// result's _meta. What the call means (which upstream, the deadline, the
// audit rows) is proxy/project's; this package knows only the wire.
package relay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/mcpchaos/mcpchaos/proxy/rpcread"
)

// Call is the envelope of one JSON-RPC tools/call request: what the SDK
// path passes upstream (name, arguments, _meta) and the client's id.
type Call struct {
	ID        json.RawMessage // the client's id, as it sent it
	Name      string          // the tool's name as the client called it
	Arguments json.RawMessage // as sent; empty when absent
	Meta      json.RawMessage // the client's _meta, as sent; empty when absent
	// Progress is the client's progressToken (raw JSON), if it gave one.
	Progress json.RawMessage
}

type envelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

type callParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Meta      json.RawMessage `json:"_meta"`
}

// Parse returns the call if body is exactly one JSON-RPC 2.0 request with
// method tools/call, a string or number id and a tool name; anything else
// (a batch, a notification, another method, a malformed message) is not
// relayed: ok is false.
func Parse(body []byte) (c Call, ok bool) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' || !bytes.Contains(body, []byte(`"tools/call"`)) {
		return c, false // cheap refusal before any decoding
	}
	return Of(rpcread.Read(body))
}

// Of is Parse of a body the entry has already read (rpcread): the call the
// reading is, if it is one the relay serves. The entry hands its reading
// over, so a call's body is decoded once: what the relay serves is what the
// entry decided on, keys matched case-sensitively as the go-sdk does.
func Of(rd rpcread.Reading) (c Call, ok bool) {
	m, single := rd.Single()
	if !single || !m.Call() || m.Method != "tools/call" || !validID(m.ID) {
		return c, false
	}
	var p callParams
	if rpcread.Decode(m.Params, &p) != nil || p.Name == "" {
		return c, false
	}
	if len(p.Meta) > 0 && string(p.Meta) != "null" {
		var meta struct {
			Progress json.RawMessage `json:"progressToken"`
		}
		if p.Meta[0] != '{' || rpcread.Decode(p.Meta, &meta) != nil {
			return Call{}, false
		}
		c.Progress = meta.Progress
	}
	c.ID, c.Name, c.Arguments, c.Meta = m.ID, p.Name, p.Arguments, p.Meta
	return c, true
}

func validID(id json.RawMessage) bool {
	if len(id) == 0 {
		return false
	}
	switch id[0] {
	case '"':
		var s string
		return json.Unmarshal(id, &s) == nil
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		_, err := strconv.ParseFloat(string(id), 64)
		return err == nil
	}
	return false
}

var seq atomic.Uint64

// NewID is an id for a relayed request: a string, while the go-sdk client
// sessions that share the upstream session number theirs, so the two can
// never collide.
func NewID() json.RawMessage {
	return json.RawMessage(strconv.Quote("mcplocal-relay-" + strconv.FormatUint(seq.Add(1), 10)))
}

// askPrefix begins the ids of the requests the relay asks of a client on
// its behalf of an upstream (NewAskID).
const askPrefix = "mcplocal-ask-"

// NewAskID is an id for a request the relay makes of the client during a
// call (an upstream's sampling, elicitation or roots): a string no go-sdk
// server session numbers its own requests with.
func NewAskID() json.RawMessage {
	return json.RawMessage(strconv.Quote(askPrefix + strconv.FormatUint(seq.Add(1), 10)))
}

// IsAskAnswer reports, cheaply, whether body may be the client's answer to
// a request with a NewAskID id (Classify then reads it).
func IsAskAnswer(body []byte) bool {
	return bytes.Contains(body, []byte(`"`+askPrefix)) && !bytes.Contains(body, []byte(`"method"`))
}

// Ask is a request of the relay's own to the client: method with params,
// as an upstream sent them, under id.
func Ask(id json.RawMessage, method string, params json.RawMessage) []byte {
	return message(id, method, params, nil, nil)
}

// Request is the upstream's tools/call, as the go-sdk client would send
// the SDK path's call: meta as given (nil: no _meta), the upstream's tool
// name, the client's arguments ({} when it sent none).
func (c Call) Request(id json.RawMessage, upstreamName string, meta json.RawMessage) ([]byte, error) {
	name, err := json.Marshal(upstreamName)
	if err != nil {
		return nil, err
	}
	args := c.Arguments
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	var p bytes.Buffer
	p.Grow(len(meta) + len(name) + len(args) + 40)
	p.WriteByte('{')
	if len(meta) > 0 {
		p.WriteString(`"_meta":`)
		p.Write(meta)
		p.WriteByte(',')
	}
	p.WriteString(`"name":`)
	p.Write(name)
	p.WriteString(`,"arguments":`)
	p.Write(args)
	p.WriteByte('}')
	return message(id, "tools/call", p.Bytes(), nil, nil), nil
}

// message builds one JSON-RPC message from raw parts; nil parts are left out.
func message(id json.RawMessage, method string, params, result, errObj json.RawMessage) []byte {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0"`)
	if len(id) > 0 {
		b.WriteString(`,"id":`)
		b.Write(id)
	}
	if method != "" {
		b.WriteString(`,"method":`)
		m, _ := json.Marshal(method)
		b.Write(m)
	}
	if params != nil {
		b.WriteString(`,"params":`)
		b.Write(params)
	}
	if result != nil {
		b.WriteString(`,"result":`)
		b.Write(result)
	}
	if errObj != nil {
		b.WriteString(`,"error":`)
		b.Write(errObj)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// Response is a JSON-RPC response to id carrying result (or errObj).
func Response(id, result, errObj json.RawMessage) []byte { return message(id, "", nil, result, errObj) }

// Notification is a JSON-RPC notification.
func Notification(method string, params json.RawMessage) []byte {
	return message(nil, method, params, nil, nil)
}

// Cancelled is the notifications/cancelled for request id, with reason.
func Cancelled(id json.RawMessage, reason string) []byte {
	params, _ := json.Marshal(struct {
		RequestID json.RawMessage `json:"requestId"`
		Reason    string          `json:"reason"`
	}{id, reason})
	return Notification("notifications/cancelled", params)
}

// Session is where a relayed request goes: the client's own upstream
// session.
type Session struct {
	HTTP            *http.Client
	URL             string
	ID              string
	ProtocolVersion string
}

// ErrSessionGone says the upstream no longer knows the session (404 to a
// request carrying its id): nothing ran there.
var ErrSessionGone = errors.New("upstream session not found")

// StatusError is an upstream's HTTP refusal of a relayed request: a
// status outside 2xx, with its body (JSON: the shape check turned every
// other refusal into a transport error first).
type StatusError struct {
	Status int
	Body   []byte
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("upstream answered HTTP %d: %s", e.Status, bytes.TrimSpace(e.Body))
}

// RPCError is the message of the JSON-RPC error the refusal's body carries,
// if it is one (a response with an id and an error object).
func (e *StatusError) RPCError() (string, bool) {
	m := Classify(e.Body)
	if m.Kind != Answer || m.Error == nil {
		return "", false
	}
	var we WireError
	if json.Unmarshal(m.Error, &we) != nil {
		return "", false
	}
	return we.Message, true
}

// ContentTypeError says a 2xx answer to a request was neither JSON nor an
// event stream (an empty body without a Content-Type, say).
type ContentTypeError struct {
	Type string // its media type; empty when it had none
}

func (e *ContentTypeError) Error() string {
	return fmt.Sprintf("unsupported content type %q", e.Type)
}

// Post sends msg on s and returns the upstream's answer as a stream of
// messages; the caller closes it. An upstream that no longer knows the
// session (404 with no JSON-RPC error) is ErrSessionGone, another status
// outside 2xx a *StatusError, a 2xx answer to a request that is neither
// JSON nor SSE a *ContentTypeError; an error of the HTTP client's comes
// back as it is.
func (s Session) Post(ctx context.Context, msg []byte) (*Stream, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL, bytes.NewReader(msg))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if s.ID != "" {
		req.Header.Set("Mcp-Session-Id", s.ID)
	}
	if s.ProtocolVersion != "" {
		req.Header.Set("Mcp-Protocol-Version", s.ProtocolVersion)
	}
	resp, err := s.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(resp.Body) // bounded by the session's HTTP client
		resp.Body.Close()
		se := &StatusError{Status: resp.StatusCode, Body: b}
		if _, rpc := se.RPCError(); resp.StatusCode == http.StatusNotFound && s.ID != "" && !rpc {
			return nil, ErrSessionGone
		}
		return nil, se
	}
	media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	st := &Stream{body: resp.Body, sse: media == "text/event-stream"}
	switch {
	case st.sse:
		st.r = bufio.NewReader(resp.Body)
	case media == "application/json":
	case resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent:
		// A notification's or a response's answer: no body to read.
	default:
		resp.Body.Close()
		return nil, &ContentTypeError{Type: media}
	}
	return st, nil
}

// Stream is an upstream's answer to one relayed request: one JSON body, or
// an SSE stream of messages.
type Stream struct {
	body   io.ReadCloser
	r      *bufio.Reader
	sse    bool
	done   bool
	lastID string // the last SSE event id seen
}

// SSE reports whether the answer is an event stream (else one JSON body).
func (s *Stream) SSE() bool { return s.sse }

// LastEventID is the id of the last SSE event read, if the upstream gave
// its events ids (a stream it offers to resume).
func (s *Stream) LastEventID() string { return s.lastID }

// Next returns the next JSON-RPC message; io.EOF when there is none left.
// A JSON answer is one message, returned even when empty (it is then not
// JSON-RPC); an event stream yields the data of each event named message
// (or not named), as the go-sdk client reads it.
func (s *Stream) Next() ([]byte, error) {
	if s.done {
		return nil, io.EOF
	}
	if !s.sse {
		s.done = true
		return io.ReadAll(s.body)
	}
	var data []byte
	other := false // the event is named, not "message": skipped
	for {
		line, err := s.r.ReadBytes('\n')
		if err != nil && len(line) == 0 {
			if err == io.EOF && len(data) > 0 && !other {
				return data, nil
			}
			return nil, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			if len(data) > 0 && !other {
				return data, nil
			}
			data, other = data[:0], false
			continue
		}
		if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			v = bytes.TrimPrefix(v, []byte(" "))
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, v...)
		} else if v, ok := bytes.CutPrefix(line, []byte("event:")); ok {
			v = bytes.TrimPrefix(v, []byte(" "))
			other = len(v) > 0 && string(v) != "message"
		} else if v, ok := bytes.CutPrefix(line, []byte("id:")); ok && len(v) > 0 {
			s.lastID = string(bytes.TrimPrefix(v, []byte(" ")))
		}
		// retry: and comments carry nothing the relay uses.
	}
}

// Close ends the stream.
func (s *Stream) Close() error { return s.body.Close() }

// Kind classifies an upstream message for the relay.
type Kind int

// Kinds of upstream messages.
const (
	Invalid    Kind = iota
	Notify          // a notification (progress, log message, ...)
	ServerCall      // a request from the server (sampling, elicitation, roots, ping)
	Answer          // a response (result or error)
)

// Message is one upstream message, its envelope decoded.
type Message struct {
	Kind   Kind
	ID     json.RawMessage
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  json.RawMessage
}

// Classify decodes msg's envelope.
func Classify(msg []byte) Message {
	var e envelope
	if json.Unmarshal(msg, &e) != nil {
		return Message{}
	}
	m := Message{ID: e.ID, Method: e.Method, Params: e.Params, Result: e.Result, Error: e.Error}
	switch {
	case e.Method != "" && len(e.ID) == 0:
		m.Kind = Notify
	case e.Method != "":
		m.Kind = ServerCall
	case len(e.ID) > 0 && (e.Result != nil || e.Error != nil):
		m.Kind = Answer
	}
	return m
}

// WireError is a JSON-RPC error object.
type WireError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Result is an upstream's tools/call result: its raw bytes, whether it is
// an isError result, and its _meta as sent.
type Result struct {
	raw     json.RawMessage
	meta    json.RawMessage
	IsError bool
}

// ParseResult reads what the relay needs of a tools/call result.
func ParseResult(raw json.RawMessage) (Result, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return Result{}, errors.New("tools/call result is not an object")
	}
	var top struct {
		IsError bool            `json:"isError"`
		Meta    json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &top); err != nil {
		return Result{}, err
	}
	return Result{raw: raw, meta: top.Meta, IsError: top.IsError}, nil
}

// FirstText is the text of the result's first text content, if any.
func (r Result) FirstText() string {
	var top struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	_ = json.Unmarshal(r.raw, &top)
	for _, c := range top.Content {
		if c.Type == "text" {
			return c.Text
		}
	}
	return ""
}

// Stamped is the result with metaKey: code added to its _meta (the rest of
// _meta kept). A result without _meta gets one spliced in front of its
// fields, without re-encoding them.
func (r Result) Stamped(metaKey, code string) (json.RawMessage, error) {
	key, _ := json.Marshal(metaKey)
	val, _ := json.Marshal(code)
	if len(r.meta) == 0 {
		rest := bytes.TrimSpace(r.raw[1:])
		out := make([]byte, 0, len(r.raw)+len(key)+len(val)+16)
		out = append(out, `{"_meta":{`...)
		out = append(out, key...)
		out = append(out, ':')
		out = append(out, val...)
		out = append(out, '}')
		if len(rest) > 0 && rest[0] != '}' {
			out = append(out, ',')
		}
		return append(out, rest...), nil
	}
	fields := map[string]json.RawMessage{}
	if err := json.Unmarshal(r.raw, &fields); err != nil {
		return nil, err
	}
	meta := map[string]json.RawMessage{}
	if string(r.meta) != "null" {
		if err := json.Unmarshal(r.meta, &meta); err != nil {
			return nil, fmt.Errorf("result _meta: %w", err)
		}
	}
	meta[metaKey] = val
	mb, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	fields["_meta"] = mb
	return json.Marshal(fields)
}

// Event is msg as one SSE event, written in one Write as the go-sdk does.
func Event(msg []byte) []byte {
	b := make([]byte, 0, len(msg)+24)
	b = append(b, "event: message\ndata: "...)
	b = append(b, msg...)
	return append(b, "\n\n"...)
}

// IsCancel reports whether body is one JSON-RPC notifications/cancelled.
func IsCancel(body []byte) bool {
	if !bytes.Contains(body, []byte(`"notifications/cancelled"`)) {
		return false
	}
	var e envelope
	return json.Unmarshal(body, &e) == nil && e.Method == "notifications/cancelled" && len(e.ID) == 0
}
