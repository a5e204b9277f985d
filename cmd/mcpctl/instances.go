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
	"text/tabwriter"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/health"
)

const getUsage = `mcpctl get instances [--json] [--url URL] [--token T | --token-file PATH] [--timeout D]

List the proxy's upstream servers with their health, from GET URL/api/v1/instances:
server, project, status, probe, last latency, last error, and a note when a
readiness probe answers so fast it is likely reading a local table. A last
error too long for the table keeps its start and its cause (the end), and is
printed whole under the table; --json gives every field.

Statuses: healthy (readiness probe passed), live (only tools/list answered:
the server's own upstream is unverified), degraded (failing, under the
threshold), unhealthy (failed threshold times in a row), misconfigured (the
probe names a tool the server does not expose), unknown (not probed yet).
"(paused)" after a status: an operator paused the server's project (mcpctl
pause); its requests wait in the pause queue.

For the servers themselves (URL, healthCheck) see 'mcpctl get servers'
('mcpctl help create').

` + connHelp

func runGet(args []string, stdout io.Writer, getenv func(string) string) error {
	if len(args) > 0 && args[0] == "servers" {
		return runGetServers(args[1:], stdout, getenv)
	}
	if len(args) == 0 || args[0] != "instances" {
		return usagef("get", "get: want 'get instances' or 'get servers'")
	}
	fs := flag.NewFlagSet("get instances", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c := &conn{getenv: getenv}
	c.flags(fs, defaultTimeout)
	asJSON := fs.Bool("json", false, "print the instances as JSON")
	pos, err := parseInterleaved(fs, args[1:])
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, getUsage)
		return nil
	}
	if err != nil {
		return usagef("get", "get instances: %v", err)
	}
	if len(pos) > 0 {
		return usagef("get", "get instances: unexpected arguments: %s", strings.Join(pos, " "))
	}
	if err := c.resolve("get instances"); err != nil {
		return err
	}
	u, err := c.endpoint("/api/v1/instances")
	if err != nil {
		return usagef("get", "%v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	resp, body, err := c.get(ctx, u.String())
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: proxy answered %s: %s", u, resp.Status, bodyExcerpt(body))
	}
	var out struct {
		Instances []health.Instance `json:"instances"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return fmt.Errorf("GET %s: answer is not instances JSON (%v): %s", u, err, bodyExcerpt(body))
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out.Instances)
	}
	return renderInstances(stdout, out.Instances)
}

func renderInstances(w io.Writer, ins []health.Instance) error {
	if len(ins) == 0 {
		_, err := fmt.Fprintln(w, "no upstream servers (is the proxy serving?)")
		return err
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tPROJECT\tSTATUS\tPROBE\tLATENCY\tLAST ERROR")
	var notes, whole []string
	for _, in := range ins {
		lat := "-"
		if !in.CheckedAt.IsZero() {
			lat = in.Latency.Round(100 * time.Microsecond).String()
		}
		last := in.LastError
		if last == "" {
			last = "-"
		} else if r := []rune(last); len(r) > maxErrorColumn {
			// The cause is at the end ("connection refused"), what was
			// being done at the start: keep both, and print it whole below.
			last = string(r[:maxErrorColumn/2-1]) + "…" + string(r[len(r)-maxErrorColumn/2:])
			whole = append(whole, fmt.Sprintf("last error of %s/%s: %s", in.Project, in.Server, in.LastError))
		}
		status := string(in.Status)
		if in.Paused {
			status += " (paused)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", in.Server, in.Project, status, in.Probe, lat, last)
		if in.Note != "" {
			notes = append(notes, fmt.Sprintf("note: %s/%s %s", in.Project, in.Server, in.Note))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
	if len(whole) > 0 {
		fmt.Fprintln(w)
		for _, e := range whole {
			fmt.Fprintln(w, e)
		}
	}
	return nil
}

// maxErrorColumn is how many characters of a last error the table shows.
const maxErrorColumn = 80
