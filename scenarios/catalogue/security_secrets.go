package catalogue

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	fakellm "github.com/mcpchaos/mcpchaos/fakes/llm"
	"github.com/mcpchaos/mcpchaos/scenarios/evidence/mcplocal"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// heldSecretScenarios hold "secrets never leave" by value: secrets the
// proxy holds, echoed back by a service it talks to.
func heldSecretScenarios() []Scenario {
	env := twoUsers
	env.LLM, env.Fallback, env.LLMKeys = true, true, true
	return []Scenario{
		{Fault: harness.LLMFault{Step: fakellm.Do(fakellm.EchoCredentials)}, Operation: KeysEchoedBack, Promise: "8 secrets never leave",
			Labels: []string{"security", "secrets"}, Env: env, Budget: func(b harness.Bounds) time.Duration { return 2 * b.D(harness.BoundChat) }, Expect: sessionAnswered,
			Needs: harness.Needs(harness.CapAuditAPI)}, // mcplocal's chat API and its llm_attempt rows
		{Fault: harness.LLMFault{Step: fakellm.Do(fakellm.AnswerEcho)}, Operation: KeyEchoedInAnswer, Promise: "8 secrets never leave",
			Labels: []string{"security", "secrets", "llm"}, Env: env, Budget: func(b harness.Bounds) time.Duration { return 2 * b.D(harness.BoundChat) }, Expect: sessionAnswered,
			Needs: harness.Needs(harness.CapAuditAPI)}, // mcplocal's chat API
	}
}

// KeyEchoedInAnswer: the primary LLM answers 200 with a text quoting the
// key it was sent; streamed, the key is cut across two chunks. A chat turn,
// plain and streamed, answers; neither the plain text nor the streamed text
// put back together carries the key, and the answer still says what the
// model said around it.
var KeyEchoedInAnswer = Operation{Name: "an LLM's answer echoing the key it was sent, plain and streamed across two chunks", Do: func(ctx context.Context, env *harness.Env) Observation {
	clk := startClock()
	var o Observation
	for _, stream := range []bool{false, true} {
		status, body, err := chatTurn(ctx, env, "alice", stream)
		if err != nil {
			return clk.stop(Observation{Err: err})
		}
		text := chatText(body, stream)
		where := fmt.Sprintf("the chat answer (stream=%v, HTTP %d)", stream, status)
		if status != http.StatusOK || !strings.Contains(text, "Authorization=") {
			o.Broken = append(o.Broken, where+" does not quote the model's answer: the fault did not strike: "+excerpt(body))
			continue
		}
		if code := chatTraceCode(body); code != "" {
			o.Trace = code
		}
		for _, k := range []string{harness.LLMKeyPrimary, harness.LLMKeyFallback} {
			if i := strings.Index(text, k); i >= 0 {
				o.Broken = append(o.Broken, fmt.Sprintf("8 %s carries a provider's key: %s", where, excerpt(text[max(0, i-80):])))
			}
		}
	}
	clk.into(&o)
	return o
}}

// chatText is the text of a chat answer: the plain answer's "text", or
// the streamed answer's chunks put back together.
func chatText(answer string, stream bool) string {
	if !stream {
		var r struct {
			Text string `json:"text"`
		}
		_ = json.Unmarshal([]byte(answer), &r)
		return r.Text
	}
	var b strings.Builder
	event := ""
	for _, line := range strings.Split(answer, "\n") {
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: ") && event == "chunk":
			var c struct {
				Text string `json:"text"`
			}
			if json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &c) == nil {
				b.WriteString(c.Text)
			}
		}
	}
	return b.String()
}

// KeysEchoedBack: both LLM providers answer 401 with a body quoting the
// credentials they were sent (the primary's API key, the fallback's OAuth
// token). A chat turn, plain and streamed, fails; neither its answer, nor
// its audit rows (the chat_turn and each llm_attempt), nor the proxy's log
// carries either key. The answer still says what happened: it quotes the
// provider's words with the key masked.
var KeysEchoedBack = Operation{Name: "an LLM provider's 401 echoing the key it was sent, in chat answers, llm_attempt rows and logs", Do: func(ctx context.Context, env *harness.Env) Observation {
	clk := startClock()
	if env.Fallback == nil || env.LLM == nil {
		return clk.stop(Observation{Err: fmt.Errorf("the world has no fake LLMs")})
	}
	if err := env.Fallback.Set(fakellm.AnyModel, fakellm.Do(fakellm.EchoCredentials)); err != nil {
		return clk.stop(Observation{Err: err})
	}
	var o Observation
	keys := []string{harness.LLMKeyPrimary, harness.LLMKeyFallback}
	leaks := func(where, text string) {
		for _, k := range keys {
			if strings.Contains(text, k) {
				o.Broken = append(o.Broken, fmt.Sprintf("8 %s carries a provider's key: %s", where, excerpt(text[max(0, strings.Index(text, k)-80):])))
			}
		}
	}
	for _, stream := range []bool{false, true} {
		status, body, err := chatTurn(ctx, env, "alice", stream)
		if err != nil {
			return clk.stop(Observation{Err: err})
		}
		where := fmt.Sprintf("the chat answer (stream=%v, HTTP %d)", stream, status)
		leaks(where, body)
		if !strings.Contains(body, "Authorization=") {
			o.Broken = append(o.Broken, where+" does not quote the provider's refusal: the fault did not strike: "+excerpt(body))
		}
		code := chatTraceCode(body)
		if code == "" {
			o.Broken = append(o.Broken, where+" carries no trace code: "+excerpt(body))
			continue
		}
		o.Trace = code
		rows, err := evidenceOf(env).Spans(ctx, code)
		if err != nil {
			o.Broken = append(o.Broken, "audit: "+err.Error())
			continue
		}
		attempts := 0
		for _, r := range rows {
			if r.Kind == mcplocal.KindLLMAttempt {
				attempts++
			}
			leaks(fmt.Sprintf("the %s audit row (%s)", r.Kind, r.Attrs[mcplocal.AttrServer]), r.Detail+" "+r.Reason)
		}
		if attempts < 2 {
			o.Broken = append(o.Broken, fmt.Sprintf("%d llm_attempt rows for a turn both providers refused, want 2", attempts))
		}
	}
	if lr, ok := env.Target.(harness.LogReader); ok {
		leaks("the proxy's log", lr.Logs())
	}
	clk.into(&o)
	return o
}}

// chatTurn posts one chat turn as user and returns the status and the whole
// answer (a JSON body, or the SSE stream's text).
func chatTurn(ctx context.Context, env *harness.Env, user string, stream bool) (int, string, error) {
	hc := harness.HTTPClient(env.Token(user))
	defer hc.CloseIdleConnections()
	body := fmt.Sprintf(`{"messages":[{"role":"user","content":"hello"}],"stream":%v}`, stream)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, env.Target.URL()+"/api/v1/chat", strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b), err
}

// chatTraceCode is the traceCode of a chat answer (JSON or the last SSE
// event's data).
func chatTraceCode(answer string) string {
	for _, line := range strings.Split(answer, "\n") {
		line = strings.TrimPrefix(line, "data: ")
		var f struct {
			TraceCode string `json:"traceCode"`
		}
		if json.Unmarshal([]byte(line), &f) == nil && f.TraceCode != "" {
			return f.TraceCode
		}
	}
	return ""
}
