package llm

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// The behaviours below play, on the stub, the provider answers the adapter
// must tell apart: a streamed answer and the ways a stream breaks, and
// Anthropic's gating of subscription OAuth tokens. Each writes only what the
// adapter reads of the wire format (the fakes in fakes/llm, checked against
// the official SDKs, play the whole format for the scenarios).

// streamEnd says how a streamed answer ends.
type streamEnd int

const (
	endDone     streamEnd = iota // the closing marker: [DONE] or message_stop
	endStall                     // half the text, then nothing until the client goes away
	endTruncate                  // half the text, then a clean end without the marker
	endError                     // half the text, then an in-stream error
)

// streamed answers with text in chunks of a word or so, in the wire format
// of the path it was called on, ending as end says.
func streamed(text string, end streamEnd) behaviour {
	return func(s *stub, w http.ResponseWriter, r *http.Request, body []byte) {
		anthropic := r.URL.Path == "/v1/messages"
		model := requestedModel(body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		flush := func() {
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
		}
		event := func(name string, data any) {
			b, _ := json.Marshal(data)
			if anthropic {
				fmt.Fprintf(w, "event: %s\n", name)
			}
			fmt.Fprintf(w, "data: %s\n\n", b)
			flush()
		}
		if anthropic {
			event("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "model": model, "content": []any{}}})
			event("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]string{"type": "text", "text": ""}})
		}
		chunks := strings.SplitAfter(text, " ")
		if end != endDone {
			chunks = chunks[:max(1, len(chunks)/2)]
		}
		for _, c := range chunks {
			if anthropic {
				event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]string{"type": "text_delta", "text": c}})
			} else {
				event("", map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": model,
					"choices": []map[string]any{{"index": 0, "delta": map[string]string{"content": c}}}})
			}
		}
		switch end {
		case endDone:
			if anthropic {
				event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
				event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]string{"stop_reason": "end_turn"}})
				event("message_stop", map[string]string{"type": "message_stop"})
			} else {
				fmt.Fprint(w, "data: [DONE]\n\n")
				flush()
			}
		case endStall:
			select {
			case <-r.Context().Done():
				s.hungUp.Add(1)
			case <-s.release:
			}
		case endTruncate:
		case endError:
			if anthropic {
				event("error", map[string]any{"type": "error", "error": map[string]string{"type": "overloaded_error", "message": "Overloaded"}})
			} else {
				event("", map[string]any{"error": map[string]any{"message": "The server had an error while processing your request.", "type": "server_error"}})
			}
		}
	}
}

// gatedAnthropic answers the Messages API the way Anthropic treats a Claude
// subscription OAuth token outside its own client: as x-api-key it is
// refused (401); as a bearer token without the oauth beta header, too; with
// both it passes authentication and then gets 429 on a listed (current)
// model and 404 on any other id. An API key gets an answer on a listed model
// and a plain 404 on any other.
func gatedAnthropic(listed ...string) behaviour {
	return func(s *stub, w http.ResponseWriter, r *http.Request, body []byte) {
		model := requestedModel(body)
		notFound := raw(http.StatusNotFound, `{"type":"error","error":{"type":"not_found_error","message":"model: `+model+`"}}`)
		unauthorized := raw(http.StatusUnauthorized, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)
		token, bearer := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		switch {
		case IsOAuthToken(r.Header.Get("x-api-key")):
			unauthorized(s, w, r, body)
		case bearer && IsOAuthToken(token) && !strings.Contains(r.Header.Get("anthropic-beta"), oauthBeta):
			unauthorized(s, w, r, body)
		case bearer && IsOAuthToken(token) && slices.Contains(listed, model):
			raw(http.StatusTooManyRequests, `{"type":"error","error":{"type":"rate_limit_error","message":"Error"}}`)(s, w, r, body)
		case !slices.Contains(listed, model):
			notFound(s, w, r, body)
		default:
			answer("hi")(s, w, r, body)
		}
	}
}
