package llm

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
)

// openaiProvider speaks the OpenAI-compatible chat completions API (vLLM,
// LiteLLM, llama.cpp, OpenAI itself): POST {url}/chat/completions, where url
// already ends in /v1. Non-streaming.
type openaiProvider struct {
	cfg  ProviderConfig
	base string
	http *httpCaller
}

func (p *openaiProvider) name() string { return p.cfg.Name }

type openaiMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type openaiRequest struct {
	Model       string          `json:"model"`
	Messages    []openaiMessage `json:"messages"`
	MaxTokens   int             `json:"max_tokens,omitempty"`
	Temperature *float64        `json:"temperature,omitempty"`
	Stream      bool            `json:"stream"`
}

type openaiResponse struct {
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Error json.RawMessage `json:"error"`
}

// request encodes req as a chat completion request.
func (p *openaiProvider) request(req *Request, stream bool) ([]byte, http.Header, *attemptResult) {
	body := openaiRequest{Model: p.cfg.Model, MaxTokens: req.MaxTokens, Temperature: req.Temperature, Stream: stream}
	if req.System != "" {
		body.Messages = append(body.Messages, openaiMessage{Role: "system", Content: req.System})
	}
	for _, m := range req.Messages {
		body.Messages = append(body.Messages, openaiMessage{Role: m.Role, Content: m.Content})
	}
	buf, err := json.Marshal(body)
	if err != nil {
		return nil, nil, &attemptResult{model: p.cfg.Model, outcome: OutcomeInvalid, detail: "encoding request: " + err.Error()}
	}
	h := jsonHeader()
	if p.cfg.APIKey != "" {
		h.Set("Authorization", "Bearer "+p.cfg.APIKey)
	}
	return buf, h, nil
}

func (p *openaiProvider) attempt(ctx context.Context, req *Request) attemptResult {
	buf, h, fail := p.request(req, false)
	if fail != nil {
		return *fail
	}
	res, err := p.http.send(ctx, http.MethodPost, p.base+"/chat/completions", h, buf, maxCompletionBody, nil)
	r, ok := fromHTTP(p.cfg.Model, "POST /chat/completions", res, err)
	if !ok {
		return r
	}

	var out openaiResponse
	if err := json.Unmarshal(res.body, &out); err != nil {
		return invalid(r, "malformed JSON: %v", err)
	}
	if len(out.Error) > 0 && string(out.Error) != "null" {
		return invalid(r, "error in a %d answer: %s", res.status, errorSummary(res.body))
	}
	if len(out.Choices) == 0 {
		r.outcome, r.detail = OutcomeEmpty, "no choices"
		return r
	}
	text, ok := openaiContent(out.Choices[0].Message.Content)
	if !ok {
		return invalid(r, "choices[0].message.content is neither a string nor text parts")
	}
	if strings.TrimSpace(text) == "" {
		r.outcome, r.detail = OutcomeEmpty, "empty completion (finish_reason "+quoteOr(out.Choices[0].FinishReason, "none")+")"
		return r
	}
	r.outcome, r.text = OutcomeOK, text
	if out.Model != "" {
		r.model = out.Model
	}
	return r
}

// openaiContent accepts content as a string, null, or an array of
// {type:"text", text} parts.
func openaiContent(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return "", false
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String(), true
}

func quoteOr(s, alt string) string {
	if s == "" {
		return alt
	}
	return `"` + s + `"`
}
