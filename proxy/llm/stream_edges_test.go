package llm

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/proxy/knobs"
)

type sseEvent struct{ event, data string }

// TestSSEEventsReadsTheWholeStream: events end at a blank line, data lines
// join with newlines, an event without data is none, the last event is
// delivered without its blank line, a stop ends the reading, lines up to
// 1 MiB are read and a longer one is an error.
func TestSSEEventsReadsTheWholeStream(t *testing.T) {
	long := strings.Repeat("x", 100<<10) // over bufio's 64 KiB default
	for _, c := range []struct {
		name, in string
		stopAt   int // stop after this many events (0: never)
		want     []sseEvent
		err      bool
	}{
		{"two events", "event: a\ndata: 1\n\nevent: b\ndata: 2\ndata: 3\n\n", 0, []sseEvent{{"a", "1"}, {"b", "2\n3"}}, false},
		{"no data is no event", "event: ping\n\n\n\ndata: x\n\n", 0, []sseEvent{{"", "x"}}, false},
		{"the last without its blank line", "data: 1\n\ndata: 2", 0, []sseEvent{{"", "1"}, {"", "2"}}, false},
		{"nothing after the last blank line", "data: 1\n\n", 0, []sseEvent{{"", "1"}}, false},
		{"a stop", "data: 1\n\ndata: 2\n\ndata: 3", 1, []sseEvent{{"", "1"}}, false},
		{"a long line", "data: " + long + "\n\n", 0, []sseEvent{{"", long}}, false},
		{"a line over 1 MiB", "data: " + strings.Repeat("y", 1<<20+1) + "\n\ndata: after\n\n", 0, nil, true},
	} {
		var got []sseEvent
		err := sseEvents(strings.NewReader(c.in), func(event, data string) bool {
			got = append(got, sseEvent{event, data})
			return c.stopAt > 0 && len(got) == c.stopAt
		})
		if (err != nil) != c.err {
			t.Errorf("%s: error %v, want error %v", c.name, err, c.err)
		}
		if len(got) != len(c.want) {
			t.Errorf("%s: %d events, want %d", c.name, len(got), len(c.want))
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: event %d = %.40q, want %.40q", c.name, i, got[i], c.want[i])
			}
		}
	}
}

// sse answers with an event stream of the given body.
func sse(body string) behaviour {
	return func(_ *stub, w http.ResponseWriter, _ *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, body)
	}
}

// TestStreamAsksForAnEventStreamAndNamesTheServedModel: a streamed call
// asks for text/event-stream, reports the model the provider says served
// it (or the configured one when it says none), keeps only text deltas,
// and takes "error": null as no error.
func TestStreamAsksForAnEventStreamAndNamesTheServedModel(t *testing.T) {
	noLeaks(t)
	for _, c := range []struct {
		name, body, wantModel, wantText string
		cfg                             func(*stub) ProviderConfig
	}{
		{"openai, model named", `data: {"model":"served-a","error":null,"choices":[{"delta":{"content":"he"}}]}` + "\n\n" +
			`data: {"choices":[{"delta":{"content":"llo"}}]}` + "\n\ndata: [DONE]\n\n", "served-a", "hello",
			func(s *stub) ProviderConfig { return openaiCfg("o", s, "configured-a") }},
		{"openai, no model named", `data: {"choices":[{"delta":{"content":"hi"}}]}` + "\n\ndata: [DONE]\n\n", "configured-a", "hi",
			func(s *stub) ProviderConfig { return openaiCfg("o", s, "configured-a") }},
		{"anthropic, model named", "event: message_start\ndata: {\"message\":{\"model\":\"served-b\"}}\n\n" +
			"event: content_block_delta\ndata: {\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n" +
			"event: content_block_delta\ndata: {\"delta\":{\"type\":\"input_json_delta\",\"text\":\"NOT TEXT\"}}\n\n" +
			"event: message_stop\ndata: {}\n\n", "served-b", "hi",
			func(s *stub) ProviderConfig { return anthropicCfg("a", s, "configured-b") }},
		{"anthropic, no model named", "event: message_start\ndata: {\"message\":{}}\n\n" +
			"event: content_block_delta\ndata: {\"delta\":{\"type\":\"text_delta\",\"text\":\"yo\"}}\n\n" +
			"event: message_stop\ndata: {}\n\n", "configured-b", "yo",
			func(s *stub) ProviderConfig { return anthropicCfg("a", s, "configured-b") }},
	} {
		s := newStub(t, sse(c.body))
		ad := newAdapter(t, chainOf(c.cfg(s)), knobs.Defaults())
		resp, err := ad.Stream(context.Background(), hello, func(string) {})
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if resp.Model != c.wantModel || resp.Text != c.wantText {
			t.Errorf("%s: model %q text %q, want %q %q", c.name, resp.Model, resp.Text, c.wantModel, c.wantText)
		}
		if _, h, _ := s.last(); h.Get("Accept") != "text/event-stream" {
			t.Errorf("%s: Accept %q, want text/event-stream", c.name, h.Get("Accept"))
		}
	}
}

// TestStreamErrorChunkEndsTheAttempt: an OpenAI chunk carrying an error
// ends the attempt with the error's summary.
func TestStreamErrorChunkEndsTheAttempt(t *testing.T) {
	noLeaks(t)
	s := newStub(t, sse(`data: {"error":{"type":"overloaded","message":"busy"}}`+"\n\n"))
	ad := newAdapter(t, chainOf(openaiCfg("o", s, "m")), knobs.Defaults())
	_, err := ad.Stream(context.Background(), hello, func(string) {})
	var ce *ChainError
	if !errors.As(err, &ce) || len(ce.Attempts) != 1 || !strings.Contains(ce.Attempts[0].Detail, "error in the stream: overloaded: busy") {
		t.Fatalf("got %v", err)
	}
}
