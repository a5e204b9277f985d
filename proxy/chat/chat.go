// Package chat serves POST /api/v1/chat: a conversation turn through the LLM
// failover chain, bounded by MCPCTL_CHAT_BUDGET_MS, saying which model
// answered and whether it had to fail over. A streamed answer fails over only
// before its first chunk.
package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/audit/llmrows"
	"github.com/mcpchaos/mcpchaos/proxy/llm"
	"github.com/mcpchaos/mcpchaos/proxy/redact"
	"github.com/mcpchaos/mcpchaos/proxy/trace"
)

// MaxRequestBytes bounds a chat request body.
const MaxRequestBytes = 1 << 20

// Request is the body of POST /api/v1/chat.
type Request struct {
	Messages []llm.Message `json:"messages"`
	Stream   bool          `json:"stream"`
}

// Result is a non-streamed answer, and the final frame of a streamed one.
type Result struct {
	Text       string `json:"text,omitempty"`
	LLM        string `json:"llm"`
	Model      string `json:"model"`
	FailedOver bool   `json:"failedOver"`
	TraceCode  string `json:"traceCode"`
}

// Failure is the answer when no candidate could answer.
type Failure struct {
	Error     string `json:"error"`
	TraceCode string `json:"traceCode"`
}

// Handler answers chat turns. Authenticate, if set, returns the user of a
// request (ok=false refuses it with 401).
type Handler struct {
	LLM          *llm.Adapter // nil: no LLM configured
	Budget       time.Duration
	Audit        audit.Sink
	Logger       *slog.Logger
	Authenticate func(*http.Request) (user string, ok bool)
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	code := trace.New()
	ctx := trace.With(r.Context(), code)
	user := ""
	if h.Authenticate != nil {
		u, ok := h.Authenticate(r)
		if !ok {
			writeJSON(w, http.StatusUnauthorized, Failure{Error: "chat requires a bearer token (Authorization: Bearer <token>)", TraceCode: code})
			return
		}
		user = u
	}
	var req Request
	dec := json.NewDecoder(io.LimitReader(r.Body, MaxRequestBytes))
	if err := dec.Decode(&req); err != nil || len(req.Messages) == 0 {
		writeJSON(w, http.StatusBadRequest, Failure{Error: fmt.Sprintf(`want {"messages": [{"role": "user", "content": "..."}], "stream": false}: %v`, err), TraceCode: code})
		return
	}
	if h.LLM == nil {
		writeJSON(w, http.StatusServiceUnavailable, Failure{Error: "no LLM is configured on this proxy (llm: in its config)", TraceCode: code})
		return
	}
	ctx, span, _ := trace.StartSpan(ctx)
	row := audit.Row{Kind: audit.KindChatTurn, CorrelationID: code, SpanID: span, User: user, Tool: "chat", Start: time.Now()}
	lreq := llm.Request{Messages: req.Messages}
	var resp llm.Response
	var err error
	if req.Stream {
		resp, err = h.stream(ctx, w, lreq, code)
	} else {
		resp, err = h.LLM.Complete(ctx, lreq, llm.WithBudget(h.Budget))
	}
	h.record(row, resp, err)
	if req.Stream {
		return // the stream wrote its own ending
	}
	if err != nil {
		writeJSON(w, http.StatusBadGateway, Failure{Error: Explain(err), TraceCode: code})
		return
	}
	writeJSON(w, http.StatusOK, Result{Text: redact.Values(resp.Text), LLM: resp.Provider, Model: resp.Model, FailedOver: resp.FailedOver, TraceCode: code})
}

// stream answers as server-sent events: "chunk" events with {"text"}, then
// one "done" event with the Result (no text) or one "error" event with the
// Failure.
func (h *Handler) stream(ctx context.Context, w http.ResponseWriter, req llm.Request, code string) (llm.Response, error) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flush := func() {
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	flush()
	// A model may echo a secret the proxy holds (a key a careless gateway
	// told it), cut across chunks: masked as a whole, the end of a chunk
	// that may start one is sent with the next.
	var mask redact.Stream
	chunk := func(s string) {
		if s != "" {
			writeEvent(w, "chunk", map[string]string{"text": s})
			flush()
		}
	}
	resp, err := h.LLM.Stream(ctx, req, func(s string) { chunk(mask.Next(s)) }, llm.WithBudget(h.Budget))
	chunk(mask.Flush())
	if err != nil {
		writeEvent(w, "error", Failure{Error: Explain(err), TraceCode: code})
	} else {
		writeEvent(w, "done", Result{LLM: resp.Provider, Model: resp.Model, FailedOver: resp.FailedOver, TraceCode: code})
	}
	flush()
	return resp, err
}

func (h *Handler) record(row audit.Row, resp llm.Response, err error) {
	attempts := resp.Attempts
	var ce *llm.ChainError
	if errors.As(err, &ce) {
		attempts = ce.Attempts
	}
	row.Duration, row.Status = time.Since(row.Start), audit.StatusOK
	if err != nil {
		row.Status, row.Detail = audit.StatusError, Explain(err)
	} else {
		row.Server, row.Detail = resp.Provider, resp.Model
		if resp.FailedOver {
			row.Detail += " (failed over)"
		}
	}
	if h.Audit == nil {
		return
	}
	h.Audit.Record(row)
	for _, r := range llmrows.FromAttempts(row, row.Start, attempts) {
		h.Audit.Record(r)
	}
}

// Explain says why a chat turn failed, naming the last model tried with its
// upstream status and body excerpt, with every secret the proxy holds
// masked (a provider's body may quote the key it was sent).
func Explain(err error) string { return redact.Text(explain(err)) }

func explain(err error) string {
	var ce *llm.ChainError
	if !errors.As(err, &ce) || len(ce.Attempts) == 0 {
		return err.Error()
	}
	last := ce.Attempts[len(ce.Attempts)-1]
	what := string(last.Outcome)
	if last.Status != 0 {
		what = fmt.Sprintf("HTTP %d", last.Status)
	}
	msg := fmt.Sprintf("%d candidate(s) failed; last: %s (%s) %s", len(ce.Attempts), last.Provider, last.Model, what)
	if errors.Is(err, llm.ErrStreamBroken) {
		msg = fmt.Sprintf("the answer from %s (%s) broke off mid-stream (%s); not failing over once part of an answer was sent", last.Provider, last.Model, what)
	}
	switch {
	case last.Excerpt != "":
		msg += ": " + last.Excerpt
	case last.Detail != "":
		msg += ": " + last.Detail
	}
	for i := len(ce.Attempts) - 1; i >= 0; i-- {
		if a := ce.Attempts[i]; a.OAuthGated {
			msg += fmt.Sprintf("; %s (%s): %s", a.Provider, a.Model, llm.OAuthHint(a.Status))
			break
		}
	}
	return msg
}

func writeEvent(w io.Writer, event string, v any) {
	b, _ := json.Marshal(v)
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
