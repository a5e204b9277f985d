package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
)

const (
	jsonType   = "application/json"
	sseType    = "text/event-stream; charset=utf-8"
	maxBodyLen = 8 << 20 // largest request body read
)

// dialect is one provider's wire format: what its requests, answers, streams
// and errors look like.
type dialect interface {
	// completionPath is the path of the completion endpoint.
	completionPath() string
	// requestIDHeader is the response header carrying the request id.
	requestIDHeader() string
	// authorized reports whether the request carries key.
	authorized(h http.Header, key string) bool
	// parse reads a completion request. On error the returned chat holds what
	// could be read.
	parse(body []byte) (chat, error)
	// errorFor is the error answer of an error kind, with text as its message
	// when not empty; ok is false for kinds that do not answer an error.
	errorFor(k Kind, model, text string) (e apiError, ok bool)
	// errorBody is the JSON body of an error answer.
	errorBody(e apiError, requestID string) []byte
	// message is the JSON body of a complete answer.
	message(ch chat, id, text string) []byte
	// stream is the event stream of an answer.
	stream(ch chat, id, text string) stream
	// streamError is the in-stream error event of StreamError.
	streamError(e apiError, requestID string) []byte
	// malformedEvent is an event whose data is not valid JSON.
	malformedEvent() []byte
	// modelList is the JSON body of GET /v1/models for query q.
	modelList(models []Model, q url.Values) ([]byte, *apiError)
	// modelInfo is the JSON body of GET /v1/models/{id}.
	modelInfo(m Model) []byte
}

var (
	_ dialect = anthropicDialect{}
	_ dialect = openAIDialect{}
)

// chat is what the fake reads from a completion request.
type chat struct {
	Model  string
	Stream bool
	// Prompt is the text of the last user message.
	Prompt string
	// IncludeUsage asks for a usage chunk at the end of an OpenAI stream.
	IncludeUsage bool
}

// apiError is an error answer.
type apiError struct {
	Status  int
	Type    string
	Code    string // OpenAI only; empty is null
	Message string
}

// stream is the event stream of one answer, as the bytes of each event.
type stream struct {
	frames [][]byte
	head   int // frames[:head] come before any text
	cut    int // frames[:cut] go out before a stall, a truncation or an in-stream error
}

// pingEvery is how many text deltas go between two pings of an Anthropic stream.
const pingEvery = 4

// addText appends one delta event per chunk of text, a ping after every
// pingEvery deltas when ping is not nil, and sets head and cut around them.
func (st *stream) addText(text string, delta func(string) []byte, ping []byte) {
	st.head = len(st.frames)
	st.cut = st.head
	parts := chunks(text)
	half := (len(parts) + 1) / 2
	for i, part := range parts {
		st.frames = append(st.frames, delta(part))
		if i+1 == half {
			st.cut = len(st.frames)
		}
		if ping != nil && (i+1)%pingEvery == 0 && i+1 < len(parts) {
			st.frames = append(st.frames, ping)
		}
	}
}

// wireMessage is one message of a completion request, in either format.
type wireMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// lastUserText returns the text of the last user message of msgs.
func lastUserText(msgs []wireMessage) (string, error) {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			return contentText(msgs[i].Content)
		}
	}
	return "", nil
}

// contentText returns the text of a message content: a string, or the text
// parts of a list of blocks joined by newlines.
func contentText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return "", errors.New("content: must be a string or a list of content blocks")
	}
	var texts []string
	for _, b := range blocks {
		if b.Type == "text" {
			texts = append(texts, b.Text)
		}
	}
	return strings.Join(texts, "\n"), nil
}

// mustJSON encodes v, which is one of the package's own wire types.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("llm: encoding %T: %v", v, err))
	}
	return b
}

// exchange is one request being answered.
type exchange struct {
	c      *gin.Context
	seq    int       // the request's record
	start  time.Time // when the request arrived
	step   Step
	reqID  string
	model  string
	stream bool
	// answer returns the OK JSON body (empty asks for the Empty variant), or
	// the error that replaces it.
	answer func(empty bool) ([]byte, *apiError)
	// events returns the OK event stream (empty: without text).
	events func(empty bool) stream
}

// handleCompletion serves POST /v1/messages or /v1/chat/completions.
func (s *Server) handleCompletion(c *gin.Context) {
	start := time.Now()
	reqID := s.newID("req_")
	var ch chat
	var step Step
	raw, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, maxBodyLen))
	switch {
	case err != nil:
		step = Step{Kind: BadRequest, Text: "could not read the request body: " + err.Error()}
	case !s.authorized(c):
		ch, _ = s.dialect.parse(raw)
		step = Step{Kind: Unauthorized, Text: s.unauthorizedText()}
	default:
		if ch, err = s.dialect.parse(raw); err != nil {
			step = Step{Kind: BadRequest, Text: err.Error()}
		} else if gated, ok := s.oauthStep(c, true, ch.Model); ok {
			step = gated
		} else {
			step = s.step(ch.Model)
		}
	}
	if step.Kind == EchoCredentials {
		step = Step{Kind: Unauthorized, Text: echoed(c.Request.Header)}
	}
	if step.Kind == AnswerEcho {
		step = Step{Kind: OK, Text: echoedAnswer(c.Request.Header)}
	}
	seq := s.begin(c, Request{
		Time: start, Method: c.Request.Method, Path: c.Request.URL.Path,
		Model: ch.Model, Stream: ch.Stream, Step: step, Prompt: excerpt(ch.Prompt),
	})
	msgID := s.newID("")
	text := Reply(ch.Prompt)
	if step.Text != "" {
		text = step.Text
	}
	x := &exchange{
		c: c, seq: seq, start: start, step: step, reqID: reqID, model: ch.Model, stream: ch.Stream,
		answer: func(empty bool) ([]byte, *apiError) {
			if empty {
				return s.dialect.message(ch, msgID, ""), nil
			}
			return s.dialect.message(ch, msgID, strings.ReplaceAll(text, cutMark, "")), nil
		},
		events: func(empty bool) stream {
			if empty {
				return s.dialect.stream(ch, msgID, "")
			}
			return s.dialect.stream(ch, msgID, text)
		},
	}
	status := s.play(x)
	s.done(c.Request.Context(), seq, status, start)
}

// handleModels serves GET /v1/models and GET /v1/models/{id}.
func (s *Server) handleModels(c *gin.Context) {
	start := time.Now()
	reqID := s.newID("req_")
	id := strings.TrimPrefix(c.Param("id"), "/")
	step := Step{Kind: Unauthorized, Text: s.unauthorizedText()}
	if gated, ok := s.oauthStep(c, false, id); ok {
		step = gated
	} else if s.authorized(c) {
		step = s.step(ListModels)
	}
	seq := s.begin(c, Request{Time: start, Method: c.Request.Method, Path: c.Request.URL.Path, Model: id, Step: step})
	x := &exchange{
		c: c, seq: seq, start: start, step: step, reqID: reqID, model: id,
		answer: func(empty bool) ([]byte, *apiError) {
			models := s.Models()
			if empty {
				models = nil
			}
			if id == "" {
				return s.dialect.modelList(models, c.Request.URL.Query())
			}
			for _, m := range models {
				if m.ID == id {
					return s.dialect.modelInfo(m), nil
				}
			}
			e, _ := s.dialect.errorFor(NotFound, id, "")
			return nil, &e
		},
	}
	status := s.play(x)
	s.done(c.Request.Context(), seq, status, start)
}

// handleNoRoute answers unknown paths with the provider's 404 error, and
// records them: a client with a wrong base URL shows up in Requests.
func (s *Server) handleNoRoute(c *gin.Context) {
	if strings.HasPrefix(c.Request.URL.Path, "/_fake/") {
		c.JSON(http.StatusNotFound, gin.H{"error": "no such control endpoint"})
		return
	}
	start := time.Now()
	step := Step{Kind: NotFound, Text: "Not Found"}
	seq := s.begin(c, Request{Time: start, Method: c.Request.Method, Path: c.Request.URL.Path, Step: step})
	e, _ := s.dialect.errorFor(NotFound, "", step.Text)
	e.Code = ""
	status := s.sendError(c, e, s.newID("req_"))
	s.done(c.Request.Context(), seq, status, start)
}

// authorized checks the API key when Options.APIKey is set.
func (s *Server) authorized(c *gin.Context) bool {
	return s.opts.APIKey == "" || s.dialect.authorized(c.Request.Header, s.opts.APIKey)
}

func (s *Server) unauthorizedText() string {
	if s.opts.Provider == OpenAI {
		return "Incorrect API key provided."
	}
	return "invalid x-api-key"
}

// done completes the record of a request and logs it, once: later calls for
// the same request change nothing.
func (s *Server) done(ctx context.Context, seq, status int, start time.Time) {
	r, first := s.finish(ctx, seq, status, time.Since(start))
	if !first {
		return
	}
	s.log.Info("llm request", "seq", r.Seq, "method", r.Method, "path", r.Path, "model", r.Model,
		"stream", r.Stream, "step", r.Step.String(), "status", r.Status, "took", r.Duration,
		"client_gone", r.ClientGone, "fake_closed", r.FakeClosed)
}

// play answers x according to its step and returns the status sent (0 for none).
func (s *Server) play(x *exchange) int {
	c, step := x.c, x.step
	ctx := c.Request.Context()
	c.Header(s.dialect.requestIDHeader(), x.reqID)
	switch step.Kind {
	case HangBeforeHeaders:
		<-ctx.Done()
		return 0
	case Reset:
		// The record is done before the reset reaches the client, which may
		// read it the moment its call fails.
		return resetConn(c, func() { s.done(ctx, x.seq, 0, x.start) })
	case Slow:
		if !sleep(ctx, step.delay()) {
			return 0
		}
	}
	if !x.stream || step.Kind != StreamError {
		if e, ok := s.dialect.errorFor(step.Kind, x.model, step.Text); ok {
			if step.Kind == RateLimited {
				d := step.delay()
				c.Header("retry-after", strconv.Itoa(int(math.Ceil(d.Seconds()))))
				c.Header("retry-after-ms", strconv.FormatInt(d.Milliseconds(), 10))
			}
			return s.sendError(c, e, x.reqID)
		}
	}
	if x.stream {
		return s.playStream(x)
	}
	return s.playBody(x)
}

// sendError answers the error e.
func (s *Server) sendError(c *gin.Context, e apiError, reqID string) int {
	c.Data(e.Status, jsonType, s.dialect.errorBody(e, reqID))
	return e.Status
}

// playBody answers a plain (not streamed) request.
func (s *Server) playBody(x *exchange) int {
	c, kind := x.c, x.step.Kind
	ctx := c.Request.Context()
	if kind == HangAfterHeaders {
		c.Header("Content-Type", jsonType)
		c.Status(http.StatusOK)
		c.Writer.Flush()
		<-ctx.Done()
		return http.StatusOK
	}
	body, e := x.answer(kind == Empty)
	if e != nil {
		return s.sendError(c, *e, x.reqID)
	}
	half := body[:len(body)/2]
	switch kind {
	case Malformed:
		c.Data(http.StatusOK, jsonType, append(half[:len(half):len(half)], "<!-- not json -->"...))
	case StallMidStream, TruncatedStream:
		c.Header("Content-Type", jsonType)
		c.Status(http.StatusOK)
		_, _ = c.Writer.Write(half)
		c.Writer.Flush()
		if kind == StallMidStream {
			<-ctx.Done()
		}
	default:
		c.Data(http.StatusOK, jsonType, body)
	}
	return http.StatusOK
}

// playStream answers a streamed request.
func (s *Server) playStream(x *exchange) int {
	c, kind := x.c, x.step.Kind
	ctx := c.Request.Context()
	h := c.Writer.Header()
	h.Set("Content-Type", sseType)
	h.Set("Cache-Control", "no-cache")
	c.Status(http.StatusOK)
	c.Writer.Flush()
	if kind == HangAfterHeaders {
		<-ctx.Done()
		return http.StatusOK
	}
	st := x.events(kind == Empty)
	send := func(frames ...[]byte) bool {
		for _, f := range frames {
			if _, err := c.Writer.Write(f); err != nil {
				return false
			}
			c.Writer.Flush()
		}
		return ctx.Err() == nil
	}
	switch kind {
	case StallMidStream:
		if send(st.frames[:st.cut]...) {
			<-ctx.Done()
		}
	case TruncatedStream:
		send(st.frames[:st.cut]...)
	case StreamError:
		e, _ := s.dialect.errorFor(StreamError, x.model, x.step.Text)
		_ = send(st.frames[:st.cut]...) && send(s.dialect.streamError(e, x.reqID))
	case Malformed:
		_ = send(st.frames[:st.head]...) && send(s.dialect.malformedEvent()) && send(st.frames[st.head:]...)
	default:
		send(st.frames...)
	}
	return http.StatusOK
}

// resetConn closes the request's connection with a TCP reset, answering
// nothing, and returns 0; it calls before just ahead of the reset. A
// connection that cannot be hijacked gets a 500.
func resetConn(c *gin.Context, before func()) int {
	conn, _, err := c.Writer.Hijack()
	if err != nil {
		c.Status(http.StatusInternalServerError)
		return http.StatusInternalServerError
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	before()
	_ = conn.Close()
	return 0
}

// sleep waits for d and reports true, or reports false as soon as ctx is done.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// echoedAnswer is AnswerEcho's completion text: the credentials h carried,
// each with a cutMark in the middle of its last word, so that a stream
// sends each in two chunks.
func echoedAnswer(h http.Header) string {
	cut := func(v string) string {
		i := strings.LastIndexByte(v, ' ') + 1
		if len(v)-i < 2 {
			return `"` + v + `"`
		}
		mid := i + (len(v)-i)/2
		return `"` + v[:mid] + cutMark + v[mid:] + `"`
	}
	return "you sent Authorization=" + cut(h.Get("Authorization")) + " x-api-key=" + cut(h.Get("X-Api-Key"))
}

// echoed is EchoCredentials' error message: the credentials h carried.
func echoed(h http.Header) string {
	return fmt.Sprintf("invalid credentials: Authorization=%q x-api-key=%q", h.Get("Authorization"), h.Get("X-Api-Key"))
}
