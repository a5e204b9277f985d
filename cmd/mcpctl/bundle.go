package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/bundle"
)

// writeBundle writes the bundle of code to path, readable by its owner only.
func writeBundle(code string, rows []audit.Row, rc bundle.Context, path string, stdout io.Writer) error {
	b, err := bundle.Marshal(bundle.New(code, rows, rc, time.Now()))
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("writing the bundle: %v", err)
	}
	fmt.Fprintf(stdout, "bundle of trace %s written to %s: %d rows, proxy %s\nreplay it: mcpchaos replay %s\n", code, path, len(rows), rc.Version, path)
	return nil
}

// fetchContext GETs the proxy's part of a bundle (an admin's); a refusal
// quotes the proxy's {"error": ...}.
func fetchContext(ctx context.Context, c *conn, private bool) (*bundle.Context, error) {
	u, err := c.endpoint("/api/v1/replay/context")
	if err != nil {
		return nil, usagef("trace", "trace: %v", err)
	}
	if private {
		u.RawQuery = url.Values{"private": {"true"}}.Encode()
	}
	endpoint := u.String()
	resp, body, err := c.get(ctx, endpoint)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		why := bodyExcerpt(body)
		if json.Unmarshal(body, &e) == nil && e.Error != "" {
			why = e.Error
		}
		return nil, fmt.Errorf("GET %s: proxy answered %s: %s", endpoint, resp.Status, why)
	}
	var rc bundle.Context
	if err := json.Unmarshal(body, &rc); err != nil || rc.Config == "" {
		return nil, fmt.Errorf("GET %s: answer is not a replay context: %s (is --url a mcplocal proxy that makes bundles?)", endpoint, bodyExcerpt(body))
	}
	return &rc, nil
}
