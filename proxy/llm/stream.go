package llm

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Stream is Complete with the answer delivered in pieces to onChunk as it
// arrives. The chain fails over only before the first piece: once the caller
// holds part of an answer, a failure ends the call with ErrStreamBroken
// rather than splicing another model's answer onto it. A stream that ends
// without its provider's end marker is a failure, never a short answer.
// onChunk runs on the calling goroutine's behalf, one piece at a time.
func (a *Adapter) Stream(ctx context.Context, req Request, onChunk func(string), opts ...Option) (Response, error) {
	return a.run(ctx, req, opts, func(ctx context.Context, p provider) (attemptResult, bool) {
		sent := false
		r := p.stream(ctx, &req, func(s string) {
			sent = true
			onChunk(s)
		})
		return r, sent
	})
}

// maxStreamLine bounds one SSE line.
const maxStreamLine = 1 << 20

// sseEvents calls onEvent(event, data) for each server-sent event in body.
// It returns the scanner's error (nil at a clean EOF) or onEvent's wish to stop.
func sseEvents(body io.Reader, onEvent func(event, data string) (stop bool)) error {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), maxStreamLine)
	var event string
	var data []string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if len(data) > 0 && onEvent(event, strings.Join(data, "\n")) {
				return nil
			}
			event, data = "", nil
		case strings.HasPrefix(line, "event:"):
			event = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimSpace(strings.TrimPrefix(line, "data:")))
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if len(data) > 0 {
		onEvent(event, strings.Join(data, "\n"))
	}
	return nil
}

func (p *openaiProvider) stream(ctx context.Context, req *Request, onChunk func(string)) attemptResult {
	buf, h, fail := p.request(req, true)
	if fail != nil {
		return *fail
	}
	var text strings.Builder
	done := false
	var bad, model string
	h.Set("Accept", "text/event-stream")
	res, err := p.http.send(ctx, http.MethodPost, p.base+"/chat/completions", h, buf, maxCompletionBody, func(body io.Reader) error {
		return sseEvents(body, func(_, data string) bool {
			if data == "[DONE]" {
				done = true
				return true
			}
			var chunk struct {
				Model   string `json:"model"`
				Choices []struct {
					Delta struct {
						Content string `json:"content"`
					} `json:"delta"`
				} `json:"choices"`
				Error json.RawMessage `json:"error"`
			}
			if err := json.Unmarshal([]byte(data), &chunk); err != nil {
				bad = fmt.Sprintf("malformed stream chunk: %v", err)
				return true
			}
			if len(chunk.Error) > 0 && string(chunk.Error) != "null" {
				bad = "error in the stream: " + errorSummary([]byte(data))
				return true
			}
			if chunk.Model != "" {
				model = chunk.Model
			}
			for _, c := range chunk.Choices {
				if c.Delta.Content != "" {
					text.WriteString(c.Delta.Content)
					onChunk(c.Delta.Content)
				}
			}
			return false
		})
	})
	if res.status == 0 { // no answer at all: a transport error
		r, _ := fromHTTP(p.cfg.Model, "POST /chat/completions (stream)", res, err)
		return r
	}
	r, ok := fromHTTP(p.cfg.Model, "POST /chat/completions (stream)", res, nil)
	if !ok {
		return r
	}
	if model != "" {
		r.model = model
	}
	return endStream(r, text.String(), done, bad, err, "[DONE]")
}

func (p *anthropicProvider) stream(ctx context.Context, req *Request, onChunk func(string)) attemptResult {
	model, buf, fail := p.request(ctx, req, true)
	if fail != nil {
		return *fail
	}
	var text strings.Builder
	done := false
	var bad, answered string
	h := p.header()
	h.Set("Accept", "text/event-stream")
	res, err := p.http.send(ctx, http.MethodPost, p.base+"/v1/messages", h, buf, maxCompletionBody, func(body io.Reader) error {
		return sseEvents(body, func(event, data string) bool {
			switch event {
			case "message_stop":
				done = true
				return true
			case "error":
				bad = "error event in the stream: " + errorSummary([]byte(data))
				return true
			case "message_start":
				var ms struct {
					Message struct {
						Model string `json:"model"`
					} `json:"message"`
				}
				if json.Unmarshal([]byte(data), &ms) == nil && ms.Message.Model != "" {
					answered = ms.Message.Model
				}
			case "content_block_delta":
				var d struct {
					Delta struct {
						Type string `json:"type"`
						Text string `json:"text"`
					} `json:"delta"`
				}
				if err := json.Unmarshal([]byte(data), &d); err != nil {
					bad = fmt.Sprintf("malformed stream event: %v", err)
					return true
				}
				if d.Delta.Type == "text_delta" && d.Delta.Text != "" {
					text.WriteString(d.Delta.Text)
					onChunk(d.Delta.Text)
				}
			}
			return false
		})
	})
	if res.status == 0 { // no answer at all: a transport error
		r, _ := fromHTTP(model, "POST /v1/messages (stream)", res, err)
		return r
	}
	r, ok := fromHTTP(model, "POST /v1/messages (stream)", res, nil)
	if !ok {
		p.oauthGated(&r)
		if r.status == http.StatusNotFound && p.models != nil {
			p.models.forget(model)
		}
		return r
	}
	if answered != "" {
		r.model = answered
	}
	return endStream(r, text.String(), done, bad, err, "message_stop")
}

// endStream classifies how a stream ended.
func endStream(r attemptResult, text string, done bool, bad string, err error, marker string) attemptResult {
	switch {
	case bad != "":
		r.outcome, r.detail = OutcomeInvalid, bad
	case err != nil:
		r.outcome, r.detail = OutcomeTransport, "reading the stream: "+err.Error()
	case !done:
		r.outcome, r.detail = OutcomeInvalid, fmt.Sprintf("the stream ended without %s after %d bytes: truncated", marker, len(text))
	case strings.TrimSpace(text) == "":
		r.outcome, r.detail = OutcomeEmpty, "empty streamed completion"
	default:
		r.outcome, r.text = OutcomeOK, text
	}
	return r
}
