package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// Where every command finds the proxy and its bearer token.
const (
	envToken     = "MCPCTL_TOKEN"
	envTokenFile = "MCPCTL_TOKEN_FILE"
)

// connHelp is the one description of the flags every command takes; the top
// help and each command's help print it.
const connHelp = `Flags every command takes (before or after its arguments):
  --url URL          proxy base URL (default $MCPCTL_URL, else ` + defaultURL + `)
  --token T          bearer token, needed when the proxy has users (default: the
                     file of --token-file, else $MCPCTL_TOKEN, else the file
                     named by $MCPCTL_TOKEN_FILE)
  --token-file PATH  read the bearer token from PATH (surrounding white space
                     trimmed), so it does not show in ps; give --token or
                     --token-file, not both
  --timeout D        bound on each request to the proxy (default 10s; chat 2m)
`

// conn is how a command reaches the proxy: URL, token and the bound on each
// request, from flags, else the environment.
type conn struct {
	url, token, tokenFile string
	timeout               time.Duration
	getenv                func(string) string
}

// flags registers the connection flags on fs; timeout is the command's
// default bound.
func (c *conn) flags(fs *flag.FlagSet, timeout time.Duration) {
	fs.StringVar(&c.url, "url", "", "proxy base URL")
	fs.StringVar(&c.token, "token", "", "bearer token")
	fs.StringVar(&c.tokenFile, "token-file", "", "file holding the bearer token")
	fs.DurationVar(&c.timeout, "timeout", timeout, "bound on each request to the proxy")
}

// resolve settles the token (flag, flag's file, environment, environment's
// file) and checks the timeout; cmd names the command for usage errors.
// Nothing is sent before it succeeds.
func (c *conn) resolve(cmd string) error {
	if c.timeout <= 0 {
		return usagef(cmd, "%s: --timeout must be positive, got %v", cmd, c.timeout)
	}
	switch {
	case c.token != "" && c.tokenFile != "":
		return usagef(cmd, "%s: --token and --token-file: give one", cmd)
	case c.token != "":
	case c.tokenFile != "":
		return c.readToken(c.tokenFile)
	case c.getenv(envToken) != "":
		c.token = c.getenv(envToken)
	case c.getenv(envTokenFile) != "":
		return c.readToken(c.getenv(envTokenFile))
	}
	return nil
}

func (c *conn) readToken(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("token file %s: %v", path, err)
	}
	c.token = strings.TrimSpace(string(b))
	if c.token == "" {
		return fmt.Errorf("token file %s is empty", path)
	}
	return nil
}

// endpoint is the proxy's URL with path appended.
func (c *conn) endpoint(path string) (*url.URL, error) {
	return endpoint(c.url, c.getenv, path)
}

// authorize puts the bearer token on req, if there is one.
func (c *conn) authorize(req *http.Request) {
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
}

// get GETs endpoint with the connection's token, asking for JSON, and
// returns the answer's status and its body (at most maxBody bytes). A proxy
// that cannot be reached, or does not answer within ctx (the --timeout), is
// an error that says so; any answer, refusals included, is returned for the
// caller to judge.
func (c *conn) get(ctx context.Context, endpoint string) (*http.Response, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint, nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "mcpctl")
	c.authorize(req)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, c.unanswered(req, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, nil, fmt.Errorf("GET %s: answer not complete within %v (raise --timeout?)", endpoint, c.timeout)
		}
		return nil, nil, fmt.Errorf("GET %s: reading the answer: %v", endpoint, err)
	}
	return resp, body, nil
}

// unanswered words the error of a request to the proxy that got no answer:
// one slower than --timeout says so, naming the flag; otherwise the proxy
// could not be reached.
func (c *conn) unanswered(req *http.Request, err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s %s: no answer within %v (raise --timeout?)", req.Method, req.URL, c.timeout)
	}
	return fmt.Errorf("cannot reach the proxy: %v", err)
}
