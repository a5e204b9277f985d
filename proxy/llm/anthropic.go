package llm

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
)

const (
	anthropicVersion = "2023-06-01"
	// Anthropic requires max_tokens; this is used when the Request leaves it 0.
	defaultAnthropicMaxTokens = 1024
)

// anthropicProvider speaks the Anthropic Messages API: POST {url}/v1/messages,
// non-streaming. A model written as claude-<family>-latest is resolved through
// models (see doc.go); otherwise models is nil and the model is pinned.
type anthropicProvider struct {
	cfg    ProviderConfig
	base   string // without a trailing /v1
	http   *httpCaller
	models *modelResolver
}

func (p *anthropicProvider) name() string { return p.cfg.Name }

func (p *anthropicProvider) header() http.Header {
	h := jsonHeader()
	h.Set("anthropic-version", anthropicVersion)
	setAnthropicAuth(h, p.cfg.APIKey)
	return h
}

type anthropicMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type anthropicRequest struct {
	Model       string             `json:"model"`
	MaxTokens   int                `json:"max_tokens"`
	System      string             `json:"system,omitempty"`
	Messages    []anthropicMessage `json:"messages"`
	Temperature *float64           `json:"temperature,omitempty"`
	Stream      bool               `json:"stream,omitempty"`
}

type anthropicResponse struct {
	Type    string `json:"type"`
	Model   string `json:"model"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StopReason string `json:"stop_reason"`
}

// request resolves the model (auto-follow) and encodes req as a Messages
// API request.
func (p *anthropicProvider) request(ctx context.Context, req *Request, stream bool) (string, []byte, *attemptResult) {
	model := p.cfg.Model
	if p.models != nil {
		resolved, fail := p.models.resolve(ctx)
		if fail != nil {
			return model, nil, fail
		}
		model = resolved
	}

	body := anthropicRequest{Model: model, MaxTokens: req.MaxTokens, Temperature: req.Temperature, Stream: stream}
	if body.MaxTokens <= 0 {
		body.MaxTokens = defaultAnthropicMaxTokens
	}
	system := []string{}
	if req.System != "" {
		system = append(system, req.System)
	}
	for _, m := range req.Messages {
		if m.Role == RoleSystem { // the Messages API takes system text out of band
			system = append(system, m.Content)
			continue
		}
		body.Messages = append(body.Messages, anthropicMessage{Role: m.Role, Content: m.Content})
	}
	body.System = strings.Join(system, "\n\n")
	buf, err := json.Marshal(body)
	if err != nil {
		return model, nil, &attemptResult{model: model, outcome: OutcomeInvalid, detail: "encoding request: " + err.Error()}
	}
	return model, buf, nil
}

func (p *anthropicProvider) attempt(ctx context.Context, req *Request) attemptResult {
	model, buf, fail := p.request(ctx, req, false)
	if fail != nil {
		return *fail
	}
	res, err := p.http.send(ctx, http.MethodPost, p.base+"/v1/messages", p.header(), buf, maxCompletionBody, nil)
	r, ok := fromHTTP(model, "POST /v1/messages", res, err)
	if !ok {
		p.oauthGated(&r)
		if r.status == http.StatusNotFound && p.models != nil {
			p.models.forget(model) // the alias moved on, or the model was withdrawn
		}
		return r
	}

	var out anthropicResponse
	if err := json.Unmarshal(res.body, &out); err != nil {
		return invalid(r, "malformed JSON: %v", err)
	}
	if out.Type != "message" {
		return invalid(r, "type %q in a %d answer, want \"message\": %s", out.Type, res.status, errorSummary(res.body))
	}
	var text strings.Builder
	for _, c := range out.Content {
		if c.Type == "text" {
			text.WriteString(c.Text)
		}
	}
	if strings.TrimSpace(text.String()) == "" {
		r.outcome, r.detail = OutcomeEmpty, "empty completion (stop_reason "+quoteOr(out.StopReason, "none")+")"
		return r
	}
	r.outcome, r.text = OutcomeOK, text.String()
	if out.Model != "" {
		r.model = out.Model
	}
	return r
}
