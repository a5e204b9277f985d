package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"
)

// anthropicDialect is the Anthropic Messages API.
type anthropicDialect struct{}

func (anthropicDialect) completionPath() string  { return "/v1/messages" }
func (anthropicDialect) requestIDHeader() string { return "request-id" }

func (anthropicDialect) authorized(h http.Header, key string) bool {
	return h.Get("x-api-key") == key || h.Get("Authorization") == "Bearer "+key
}

func (anthropicDialect) parse(body []byte) (chat, error) {
	var req struct {
		Model     string        `json:"model"`
		MaxTokens *int64        `json:"max_tokens"`
		Stream    bool          `json:"stream"`
		Messages  []wireMessage `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return chat{}, fmt.Errorf("There was an error parsing the body of your request: %v", err) //nolint:staticcheck // the API's wording
	}
	ch := chat{Model: req.Model, Stream: req.Stream}
	prompt, err := lastUserText(req.Messages)
	ch.Prompt = prompt
	switch {
	case err != nil:
		return ch, fmt.Errorf("messages: %w", err)
	case req.Model == "":
		return ch, errors.New("model: Field required")
	case req.MaxTokens == nil:
		return ch, errors.New("max_tokens: Field required")
	case len(req.Messages) == 0:
		return ch, errors.New("messages: Field required")
	}
	return ch, nil
}

func (anthropicDialect) errorFor(k Kind, model, text string) (apiError, bool) {
	var e apiError
	switch k {
	case NotFound:
		e = apiError{Status: http.StatusNotFound, Type: "not_found_error", Message: "model: " + model}
	case BadRequest:
		e = apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Message: "Invalid request"}
	case Unauthorized:
		e = apiError{Status: http.StatusUnauthorized, Type: "authentication_error", Message: "invalid x-api-key"}
	case RateLimited:
		e = apiError{Status: http.StatusTooManyRequests, Type: "rate_limit_error",
			Message: "This request would exceed the rate limit for your organization. Please retry later."}
	case ServerError:
		e = apiError{Status: http.StatusInternalServerError, Type: "api_error", Message: "Internal server error"}
	case Overloaded, StreamError:
		e = apiError{Status: 529, Type: "overloaded_error", Message: "Overloaded"}
	default:
		return apiError{}, false
	}
	if text != "" {
		e.Message = text
	}
	return e, true
}

type anthropicErrorBody struct {
	Type  string `json:"type"`
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
	RequestID string `json:"request_id,omitempty"`
}

func (anthropicDialect) errorBody(e apiError, requestID string) []byte {
	b := anthropicErrorBody{Type: "error", RequestID: requestID}
	b.Error.Type, b.Error.Message = e.Type, e.Message
	return mustJSON(b)
}

type anthropicUsage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

type anthropicText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type anthropicMessage struct {
	ID           string          `json:"id"`
	Type         string          `json:"type"`
	Role         string          `json:"role"`
	Model        string          `json:"model"`
	Content      []anthropicText `json:"content"`
	StopReason   *string         `json:"stop_reason"`
	StopSequence *string         `json:"stop_sequence"`
	Usage        anthropicUsage  `json:"usage"`
}

func newAnthropicMessage(ch chat, id string) anthropicMessage {
	return anthropicMessage{
		ID: "msg_fake" + id, Type: "message", Role: "assistant", Model: ch.Model,
		Content: []anthropicText{},
		Usage:   anthropicUsage{InputTokens: tokens(ch.Prompt)},
	}
}

func (anthropicDialect) message(ch chat, id, text string) []byte {
	m := newAnthropicMessage(ch, id)
	end := "end_turn"
	m.Content = []anthropicText{{Type: "text", Text: text}}
	m.StopReason = &end
	m.Usage.OutputTokens = tokens(text)
	return mustJSON(m)
}

// sseEvent formats one server-sent event.
func sseEvent(name string, data []byte) []byte {
	out := make([]byte, 0, len(name)+len(data)+16)
	out = append(out, "event: "...)
	out = append(out, name...)
	out = append(out, "\ndata: "...)
	out = append(out, data...)
	return append(out, "\n\n"...)
}

func (anthropicDialect) stream(ch chat, id, text string) stream {
	start := newAnthropicMessage(ch, id)
	start.Usage.OutputTokens = 1
	ping := sseEvent("ping", []byte(`{"type": "ping"}`))

	var st stream
	st.frames = append(st.frames,
		sseEvent("message_start", mustJSON(map[string]any{"type": "message_start", "message": start})),
		sseEvent("content_block_start", mustJSON(map[string]any{
			"type": "content_block_start", "index": 0, "content_block": anthropicText{Type: "text", Text: ""},
		})),
		ping,
	)
	st.addText(text, func(part string) []byte {
		return sseEvent("content_block_delta", mustJSON(map[string]any{
			"type": "content_block_delta", "index": 0, "delta": anthropicText{Type: "text_delta", Text: part},
		}))
	}, ping)
	st.frames = append(st.frames,
		sseEvent("content_block_stop", []byte(`{"type":"content_block_stop","index":0}`)),
		sseEvent("message_delta", mustJSON(map[string]any{
			"type":  "message_delta",
			"delta": map[string]any{"stop_reason": "end_turn", "stop_sequence": nil},
			"usage": map[string]any{"output_tokens": tokens(text)},
		})),
		sseEvent("message_stop", []byte(`{"type":"message_stop"}`)),
	)
	return st
}

func (d anthropicDialect) streamError(e apiError, requestID string) []byte {
	return sseEvent("error", d.errorBody(e, requestID))
}

func (anthropicDialect) malformedEvent() []byte {
	return sseEvent("content_block_delta", []byte(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`))
}

type anthropicModel struct {
	Type        string `json:"type"`
	ID          string `json:"id"`
	DisplayName string `json:"display_name"`
	CreatedAt   string `json:"created_at"`
}

func toAnthropicModel(m Model) anthropicModel {
	name := m.DisplayName
	if name == "" {
		name = displayName(m.ID)
	}
	return anthropicModel{Type: "model", ID: m.ID, DisplayName: name, CreatedAt: m.Created.UTC().Format(time.RFC3339)}
}

func (anthropicDialect) modelInfo(m Model) []byte { return mustJSON(toAnthropicModel(m)) }

// Anthropic's page sizes for GET /v1/models.
const (
	anthropicDefaultLimit = 20
	anthropicMaxLimit     = 1000
)

// modelList pages through models newest first, as the API does: limit (1 to
// 1000, default 20), then either after_id (the page after that id) or
// before_id (the page before it).
func (anthropicDialect) modelList(models []Model, q url.Values) ([]byte, *apiError) {
	bad := func(msg string) ([]byte, *apiError) {
		return nil, &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Message: msg}
	}
	limit := anthropicDefaultLimit
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > anthropicMaxLimit {
			return bad(fmt.Sprintf("limit: Input should be between 1 and %d", anthropicMaxLimit))
		}
		limit = n
	}
	after, before := q.Get("after_id"), q.Get("before_id")
	if after != "" && before != "" {
		return bad("after_id and before_id cannot both be set")
	}

	sorted := slices.Clone(models)
	slices.SortStableFunc(sorted, func(a, b Model) int { return b.Created.Compare(a.Created) })
	index := func(id string) int {
		return slices.IndexFunc(sorted, func(m Model) bool { return m.ID == id })
	}
	lo, hi := 0, min(limit, len(sorted))
	switch {
	case after != "":
		i := index(after)
		if i < 0 {
			return bad("after_id: no model " + after)
		}
		lo, hi = i+1, min(i+1+limit, len(sorted))
	case before != "":
		i := index(before)
		if i < 0 {
			return bad("before_id: no model " + before)
		}
		lo, hi = max(0, i-limit), i
	}

	page := struct {
		Data    []anthropicModel `json:"data"`
		HasMore bool             `json:"has_more"`
		FirstID *string          `json:"first_id"`
		LastID  *string          `json:"last_id"`
	}{Data: []anthropicModel{}}
	for _, m := range sorted[lo:hi] {
		page.Data = append(page.Data, toAnthropicModel(m))
	}
	if before != "" {
		page.HasMore = lo > 0
	} else {
		page.HasMore = hi < len(sorted)
	}
	if n := len(page.Data); n > 0 {
		page.FirstID, page.LastID = &page.Data[0].ID, &page.Data[n-1].ID
	}
	return mustJSON(page), nil
}
