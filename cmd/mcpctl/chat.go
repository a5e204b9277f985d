package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

const chatUsage = `mcpctl chat MESSAGE... [--stream] [--url URL] [--token T | --token-file PATH] [--timeout D]

Send one user message through the proxy's LLM failover chain
(POST URL/api/v1/chat) and print the answer, then which model answered:

  model: <llm> (<model>)
  ⚠ failed over → answered by <llm> (<model>)     (when the primary failed)

With --stream the answer is printed as it arrives; a streamed answer fails
over only before its first chunk. When every candidate fails, the error
names the last model with its upstream status and body excerpt.

` + connHelp

type chatResult struct {
	Text       string `json:"text"`
	LLM        string `json:"llm"`
	Model      string `json:"model"`
	FailedOver bool   `json:"failedOver"`
	TraceCode  string `json:"traceCode"`
	Error      string `json:"error"`
}

func runChat(args []string, stdout io.Writer, getenv func(string) string) error {
	fs := flag.NewFlagSet("chat", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c := &conn{getenv: getenv}
	c.flags(fs, 2*time.Minute)
	stream := fs.Bool("stream", false, "stream the answer")
	pos, err := parseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, chatUsage)
		return nil
	}
	if err != nil {
		return usagef("chat", "chat: %v", err)
	}
	if len(pos) == 0 {
		return usagef("chat", "chat: missing MESSAGE")
	}
	if err := c.resolve("chat"); err != nil {
		return err
	}
	u, err := c.endpoint("/api/v1/chat")
	if err != nil {
		return usagef("chat", "%v", err)
	}
	body, _ := json.Marshal(map[string]any{
		"messages": []map[string]string{{"role": "user", "content": strings.Join(pos, " ")}},
		"stream":   *stream,
	})
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	c.authorize(req)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return c.unanswered(req, err)
	}
	defer resp.Body.Close()
	var res chatResult
	if *stream && resp.StatusCode == http.StatusOK {
		res, err = readStream(resp.Body, stdout)
		if err != nil {
			return err
		}
	} else {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxBody))
		if err := json.Unmarshal(b, &res); err != nil {
			return fmt.Errorf("POST %s: proxy answered %s: %s", u, resp.Status, bodyExcerpt(b))
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("chat failed: %s [trace %s]", res.Error, res.TraceCode)
		}
		fmt.Fprintln(stdout, res.Text)
	}
	fmt.Fprintf(stdout, "model: %s (%s)  [trace %s]\n", res.LLM, res.Model, res.TraceCode)
	if res.FailedOver {
		fmt.Fprintf(stdout, "⚠ failed over → answered by %s (%s)\n", res.LLM, res.Model)
	}
	return nil
}

// readStream prints chunk events as they come and returns the done frame,
// or the error frame as an error.
func readStream(body io.Reader, stdout io.Writer) (chatResult, error) {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var event string
	chunked := false // a chunk was printed: its line wants ending
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event:"):
			event = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:"):
			data := strings.TrimSpace(strings.TrimPrefix(line, "data:"))
			var res chatResult
			if err := json.Unmarshal([]byte(data), &res); err != nil {
				return res, fmt.Errorf("bad stream frame %q: %v", data, err)
			}
			switch event {
			case "chunk":
				fmt.Fprint(stdout, res.Text)
				chunked = chunked || res.Text != ""
			case "done":
				fmt.Fprintln(stdout)
				return res, nil
			case "error":
				if chunked {
					fmt.Fprintln(stdout)
				}
				return res, fmt.Errorf("chat failed: %s [trace %s]", res.Error, res.TraceCode)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return chatResult{}, fmt.Errorf("reading the stream: %v", err)
	}
	return chatResult{}, errors.New("the stream ended without its final frame")
}
