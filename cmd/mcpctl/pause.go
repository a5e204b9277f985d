package main

import (
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

const pauseUsage = `mcpctl pause PROJECT [--url URL] [--token T | --token-file PATH] [--timeout D]
mcpctl resume PROJECT [--url URL] [--token T | --token-file PATH] [--timeout D]

pause holds every new request to PROJECT in the proxy's pause queue
(POST URL/api/v1/projects/PROJECT/pause), initialize too: a client
connecting to a paused project waits as well; resume lets them run
(POST .../resume). A held request's deadline clock is suspended while it
waits: after resume it gets the deadline it had left. A request left waiting
longer than MCPCTL_PAUSE_MAX_WAIT_MS is answered with "project PROJECT paused
for longer than …" and its trace code. Requests already running are not
held. /readyz and 'mcpctl get instances' show a paused project as paused.
To see the bound answer sooner, start mcplocal with MCPCTL_PAUSE_MAX_WAIT_MS
lowered; MCPCTL_REQUEST_DEADLINE_MS lowered alone stops mcplocal at start
(MCPCTL_UPSTREAM_CALL_TIMEOUT_MS, 30 s, must not exceed it): lower both.

When the proxy has users, an admin bearer token is required. Pausing a
paused project (or resuming a running one) is harmless and says so.

` + connHelp

func runPause(cmd string, args []string, stdout io.Writer, getenv func(string) string) error {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c := &conn{getenv: getenv}
	c.flags(fs, defaultTimeout)
	pos, err := parseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, pauseUsage)
		return nil
	}
	if err != nil {
		return usagef(cmd, "%s: %v", cmd, err)
	}
	if len(pos) != 1 || strings.ContainsAny(pos[0], "/?#") {
		return usagef(cmd, "%s: want exactly one PROJECT name, got %q", cmd, strings.Join(pos, " "))
	}
	if err := c.resolve(cmd); err != nil {
		return err
	}
	u, err := c.endpoint("/api/v1/projects/" + pos[0] + "/" + cmd)
	if err != nil {
		return usagef(cmd, "%v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), nil)
	if err != nil {
		return err
	}
	c.authorize(req)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return c.unanswered(req, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return fmt.Errorf("POST %s: %v", u, err)
	}
	var out struct {
		Project string    `json:"project"`
		Paused  bool      `json:"paused"`
		Since   time.Time `json:"since"`
		Waiting int       `json:"waiting"`
		Changed bool      `json:"changed"`
		Error   string    `json:"error"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return fmt.Errorf("POST %s: proxy answered %s: %s", u, resp.Status, bodyExcerpt(body))
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %s", cmd, pos[0], out.Error)
	}
	switch {
	case out.Paused && out.Changed:
		fmt.Fprintf(stdout, "project %s paused: new requests wait (their deadline clocks suspended) until 'mcpctl resume %s'\n", out.Project, out.Project)
	case out.Paused:
		fmt.Fprintf(stdout, "project %s was already paused (since %s); %d request(s) waiting\n", out.Project, out.Since.Local().Format(time.TimeOnly), out.Waiting)
	case out.Changed:
		fmt.Fprintf(stdout, "project %s resumed: waiting requests run with the deadline they had left\n", out.Project)
	default:
		fmt.Fprintf(stdout, "project %s was not paused\n", out.Project)
	}
	return nil
}
