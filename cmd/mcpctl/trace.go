package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/audit/waterfall"
	"github.com/mcpchaos/mcpchaos/proxy/bundle"
	"github.com/mcpchaos/mcpchaos/proxy/trace"
)

const (
	// defaultURL is the proxy's default listen address (see the config's listen).
	defaultURL = "http://127.0.0.1:8080"
	// envURL overrides defaultURL.
	envURL = "MCPCTL_URL"
	// defaultTimeout bounds the whole audit request, body included.
	defaultTimeout = 10 * time.Second
	// maxBody caps how much of an answer is read.
	maxBody = 32 << 20
)

func runTrace(args []string, stdout io.Writer, getenv func(string) string) error {
	fs := flag.NewFlagSet("trace", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported by report(), help by us
	c := &conn{getenv: getenv}
	c.flags(fs, defaultTimeout)
	asJSON := fs.Bool("json", false, "print rows as JSON")
	bundleFile := fs.String("bundle", "", "write a replay bundle to this file (admin)")
	private := fs.Bool("private", false, "with --bundle: keep private texts (prompts, health-check arguments)")
	pos, err := parseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, traceUsage)
		return nil
	}
	if err != nil {
		return usagef("trace", "trace: %v", err)
	}
	switch {
	case len(pos) == 0:
		return usagef("trace", "trace: missing trace CODE")
	case len(pos) > 1:
		return usagef("trace", "trace: want one trace CODE, got %d arguments: %s", len(pos), strings.Join(pos, " "))
	}
	code, err := parseCode(pos[0])
	if err != nil {
		return usagef("trace", "trace: %v", err)
	}
	if *asJSON && *bundleFile != "" {
		return usagef("trace", "trace: --json and --bundle: give one (--json prints the rows, --bundle writes them to FILE for 'mcpchaos replay')")
	}
	if *private && *bundleFile == "" {
		return usagef("trace", "trace: --private only applies with --bundle FILE")
	}
	if err := c.resolve("trace"); err != nil {
		return err
	}
	u, err := c.endpoint("/api/v1/audit")
	if err != nil {
		return usagef("trace", "trace: %v", err)
	}
	u.RawQuery = url.Values{"trace": {code}}.Encode()
	endpoint := u.String()

	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	var rc *bundle.Context
	if *bundleFile != "" { // the admin's part first: a refusal costs no audit query
		if rc, err = fetchContext(ctx, c, *private); err != nil {
			return err
		}
	}
	rows, err := fetchRows(ctx, c, endpoint)
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return fmt.Errorf("no audit rows for trace %s at %s", code, strings.TrimSuffix(strings.TrimSuffix(endpoint, "?"+u.RawQuery), "/api/v1/audit"))
	}
	if rc != nil {
		return writeBundle(code, rows, *rc, *bundleFile, stdout)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	return waterfall.Render(stdout, code, rows)
}

// parseCode upper-cases s and checks it is a trace code.
func parseCode(s string) (string, error) {
	code := strings.ToUpper(strings.TrimSpace(s))
	if trace.Valid(code) {
		return code, nil
	}
	msg := fmt.Sprintf("%q is not a trace code: want %d characters of Crockford base32 (0-9, A-Z without I, L, O, U)", s, trace.Len)
	// Crockford readers map O to 0 and I, L to 1; suggest it rather than guess.
	if fixed := strings.NewReplacer("O", "0", "I", "1", "L", "1").Replace(code); fixed != code && trace.Valid(fixed) {
		msg += fmt.Sprintf("; did you mean %s?", fixed)
	}
	return "", errors.New(msg)
}

// fetchRows GETs endpoint and decodes {"rows":[...]}; a non-200 answer
// becomes an error quoting the proxy's {"error":"..."} (or the body's start).
func fetchRows(ctx context.Context, c *conn, endpoint string) ([]audit.Row, error) {
	resp, body, err := c.get(ctx, endpoint)
	if err != nil {
		return nil, err
	}
	var out struct {
		Rows  json.RawMessage `json:"rows"`
		Error string          `json:"error"`
	}
	jsonErr := json.Unmarshal(body, &out)
	if resp.StatusCode != http.StatusOK {
		why := out.Error
		if jsonErr != nil || why == "" {
			why = bodyExcerpt(body)
		}
		return nil, fmt.Errorf("GET %s: proxy answered %s: %s", endpoint, resp.Status, why)
	}
	if jsonErr != nil {
		return nil, fmt.Errorf("GET %s: answer is not audit JSON (%v): %s", endpoint, jsonErr, bodyExcerpt(body))
	}
	if out.Rows == nil {
		return nil, fmt.Errorf("GET %s: answer has no \"rows\" field: %s (is --url a mcplocal proxy?)", endpoint, bodyExcerpt(body))
	}
	var rows []audit.Row // "rows": null decodes to none
	if err := json.Unmarshal(out.Rows, &rows); err != nil {
		return nil, fmt.Errorf("GET %s: answer is not audit JSON (%v): %s", endpoint, err, bodyExcerpt(body))
	}
	return rows, nil
}

func bodyExcerpt(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if s == "" {
		return "(empty body)"
	}
	if r := []rune(s); len(r) > 200 {
		s = string(r[:199]) + "…"
	}
	return s
}
