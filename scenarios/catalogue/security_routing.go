package catalogue

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// routingCalls is how many calls of each kind RoutingByCall makes at once
// on one client session.
const routingCalls = 15

// routingUpstreamBound is the upstream bound of the routing rows' worlds.
const routingUpstreamBound = 8 * time.Second

// routingScenarios hold promise 9, routing by call: with the raw relay on
// (the client holding its standalone stream, so the relay may take the
// calls) and off.
//
// They judge where each message goes, not a deadline, so their worlds'
// request bounds outlast what they span: 2×routingCalls round trips at once
// through a race-built in-process proxy took 1.6 s on a loaded machine,
// past the compressed 1 s upstream bound. A call whose message went astray
// still ends, at these bounds, and fails the row.
func routingScenarios() []Scenario {
	bounds := map[string]int64{harness.BoundUpstreamCall: ms(routingUpstreamBound), harness.BoundRequest: ms(routingUpstreamBound + 2*time.Second)}
	relayOn := withBounds(twoUsers, bounds)
	relayOn.Everything, relayOn.Relay = true, true
	relayOff := withBounds(twoUsers, bounds)
	relayOff.Everything, relayOff.NoRelay = true, true
	labels := []string{"security", "routing"}
	return []Scenario{
		{Fault: harness.None{}, Operation: RoutingByCallRelayed, Promise: "9 routing is by call", Labels: labels,
			Env: relayOn, Budget: requestDeadline, Expect: sessionAnswered, Needs: harness.Needs(harness.CapEverything)},
		{Fault: harness.None{}, Operation: RoutingByCall, Promise: "9 routing is by call", Labels: labels,
			Env: relayOff, Budget: requestDeadline, Expect: sessionAnswered, Needs: harness.Needs(harness.CapEverything)},
	}
}

// RoutingByCall: one client session, holding its standalone stream, makes
// routingCalls calls of the everything fake's sample tool and as many of its
// log tool at once, each with a text of its own, over raw HTTP (so the
// client sees which stream carries what). Every sampling request must come
// on the stream of the call whose prompt it carries, the client's answer
// (derived from that prompt) must come back in that call's result, and
// every log message a call causes must come on its own stream; nothing
// caused by a call may come on the standalone stream.
var RoutingByCall = Operation{Name: "sampling and log messages of concurrent calls on one session", Do: routingByCall}

// RoutingByCallRelayed is RoutingByCall in a world whose raw relay is on.
var RoutingByCallRelayed = Operation{Name: "sampling and log messages of concurrent relayed calls on one session", Do: routingByCall}

func routingByCall(ctx context.Context, env *harness.Env) Observation {
	clk := startClock()
	rc := &rawClient{env: env, hc: harness.HTTPClient(env.Token("alice"))}
	defer rc.hc.CloseIdleConnections()
	if err := rc.open(ctx, `{"sampling":{}}`); err != nil {
		return clk.stop(Observation{Err: err})
	}
	defer rc.close()
	var o Observation
	var mu sync.Mutex
	broke := func(format string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(o.Broken) < 12 {
			o.Broken = append(o.Broken, fmt.Sprintf(format, a...))
		}
	}
	if _, err := rc.post(ctx, `{"jsonrpc":"2.0","id":"level","method":"logging/setLevel","params":{"level":"debug"}}`, nil); err != nil {
		return clk.stop(Observation{Err: err})
	}
	lctx, stopListening := context.WithCancel(ctx)
	listened, ready := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(listened)
		_ = rc.listen(lctx, ready, func(m rawMessage) {
			if m.Method == "sampling/createMessage" || strings.Contains(string(m.Params), "route-") {
				broke("9 %s caused by a call came on the standalone stream: %s", m.Method, excerpt(string(m.Params)))
				if m.Method == "sampling/createMessage" {
					rc.answerSampling(ctx, m)
				}
			}
		})
	}()
	select { // the relay takes the calls of a client holding its stream
	case <-ready:
	case <-listened:
		stopListening()
		return clk.stop(Observation{Err: fmt.Errorf("the standalone stream was refused")})
	}
	var wg sync.WaitGroup
	for i := range routingCalls {
		wg.Add(2)
		go func() {
			defer wg.Done()
			prompt := fmt.Sprintf("route-sample-%d", i)
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":"s%d","method":"tools/call","params":{"name":"everything_sample","arguments":{"prompt":%q}}}`, i, prompt)
			res, err := rc.post(ctx, body, func(m rawMessage) {
				if m.Method != "sampling/createMessage" {
					return
				}
				if got := samplingPrompt(m.Params); got != prompt {
					broke("9 the sampling request of the call for %q came on the stream of the call for %q", got, prompt)
				}
				rc.answerSampling(ctx, m)
			})
			if err != nil {
				broke("the call for %q: %v", prompt, err)
				return
			}
			if want := "sampled: answer-" + prompt; !strings.Contains(res, want) {
				broke("9 the call for %q did not get its own sampling answer: %s", prompt, excerpt(res))
			}
		}()
		go func() {
			defer wg.Done()
			text := fmt.Sprintf("route-log-%d", i)
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":"l%d","method":"tools/call","params":{"name":"everything_log","arguments":{"text":%q}}}`, i, text)
			own := 0
			_, err := rc.post(ctx, body, func(m rawMessage) {
				if m.Method != "notifications/message" {
					return
				}
				var p struct {
					Data any `json:"data"`
				}
				_ = json.Unmarshal(m.Params, &p)
				got := fmt.Sprint(p.Data)
				if !strings.HasSuffix(got, ": "+text) {
					broke("9 the log message %q came on the stream of the call for %q", got, text)
					return
				}
				own++
			})
			if err != nil {
				broke("the call for %q: %v", text, err)
				return
			}
			if own == 0 {
				broke("9 no log message of the call for %q came on its stream", text)
			}
		}()
	}
	wg.Wait()
	clk.into(&o)
	stopListening()
	<-listened
	return o
}

// samplingPrompt is the text of a sampling request's first message.
func samplingPrompt(params json.RawMessage) string {
	var p struct {
		Messages []struct {
			Content struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(params, &p) != nil || len(p.Messages) == 0 {
		return ""
	}
	return p.Messages[0].Content.Text
}

// rawClient is one MCP client session spoken over raw HTTP, so that each
// message is seen on the stream that carried it.
type rawClient struct {
	env     *harness.Env
	hc      *http.Client
	session string
}

// rawMessage is one JSON-RPC message as read off a stream.
type rawMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

func (rc *rawClient) request(ctx context.Context, method, body string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, rc.env.ProjectURL(), strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if rc.session != "" {
		req.Header.Set("Mcp-Session-Id", rc.session)
	}
	return req, nil
}

// open initializes the session, offering caps.
func (rc *rawClient) open(ctx context.Context, caps string) error {
	init := `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":` + caps + `,"clientInfo":{"name":"mcpchaos-raw","version":"0.1.0"}}}`
	req, err := rc.request(ctx, http.MethodPost, init)
	if err != nil {
		return err
	}
	resp, err := rc.hc.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" {
		return fmt.Errorf("initialize answered %d without a session", resp.StatusCode)
	}
	rc.session = resp.Header.Get("Mcp-Session-Id")
	_, err = rc.post(ctx, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil)
	return err
}

func (rc *rawClient) close() {
	ctx, cancel := context.WithTimeout(context.Background(), rc.env.Bounds().D(harness.BoundRequest))
	defer cancel()
	if req, err := rc.request(ctx, http.MethodDelete, ""); err == nil {
		if resp, err := rc.hc.Do(req); err == nil {
			resp.Body.Close()
		}
	}
}

// post sends body and reads its answer: every message before the response
// goes to seen; the response's result (or error) is returned as text.
func (rc *rawClient) post(ctx context.Context, body string, seen func(rawMessage)) (string, error) {
	req, err := rc.request(ctx, http.MethodPost, body)
	if err != nil {
		return "", err
	}
	resp, err := rc.hc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusAccepted {
		return "", nil
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return "", fmt.Errorf("answered %d: %s", resp.StatusCode, excerpt(string(b)))
	}
	var answer string
	err = readMessages(resp, func(m rawMessage) bool {
		if m.Method != "" {
			if seen != nil {
				seen(m)
			}
			return true
		}
		answer = string(m.Result) + string(m.Error)
		return false
	})
	return answer, err
}

// listen holds the session's standalone stream until ctx ends, closing
// ready once the proxy answered it.
func (rc *rawClient) listen(ctx context.Context, ready chan struct{}, seen func(rawMessage)) error {
	req, err := rc.request(ctx, http.MethodGet, "")
	if err != nil {
		return err
	}
	resp, err := rc.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the standalone stream answered %d", resp.StatusCode)
	}
	close(ready)
	return readMessages(resp, func(m rawMessage) bool { seen(m); return true })
}

// answerSampling answers a sampling request with "answer-" and its prompt.
func (rc *rawClient) answerSampling(ctx context.Context, m rawMessage) {
	text, _ := json.Marshal("answer-" + samplingPrompt(m.Params))
	_, _ = rc.post(ctx, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"role":"assistant","model":"route","content":{"type":"text","text":`+string(text)+`}}}`, nil)
}

// readMessages reads a JSON body or an SSE stream message by message,
// until each returns false or the body ends.
func readMessages(resp *http.Response, each func(rawMessage) bool) error {
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var m rawMessage
		if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&m); err != nil {
			return err
		}
		each(m)
		return nil
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var data []byte
	for sc.Scan() {
		line := sc.Bytes()
		if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			data = append(data, bytes.TrimPrefix(v, []byte(" "))...)
			continue
		}
		if len(line) != 0 || len(data) == 0 {
			continue
		}
		var m rawMessage
		err := json.Unmarshal(data, &m)
		data = data[:0]
		if err != nil {
			continue
		}
		if !each(m) {
			return nil
		}
	}
	return sc.Err()
}
