// Package config reads and validates the proxy's YAML configuration.
//
// Every error names the field it is about (projects.docmost.servers.docmost.url),
// so an operator can fix a bad file without reading code.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/mcpchaos/mcpchaos/proxy/llm"
)

// Config is the whole file.
type Config struct {
	Listen   string              `yaml:"listen"`
	Audit    string              `yaml:"audit"`
	LLM      *llm.Config         `yaml:"llm"` // nil: no LLM configured (a choice, not a degradation)
	Users    map[string]User     `yaml:"users"`
	Projects map[string]*Project `yaml:"projects"`
	Sessions Sessions            `yaml:"sessions"`
	// AllowedOrigins are origins (scheme://host[:port]) allowed besides the
	// loopback ones; a request with any other Origin is refused (403).
	AllowedOrigins []string `yaml:"allowedOrigins"`
	// AllowedHosts are Host names (no port) allowed besides loopback ones and
	// the listen address: the proxy's name when reached through a DNS name.
	AllowedHosts []string `yaml:"allowedHosts"`
	// Relay forwards a plain tools/call (an upstream tool whose call the
	// relay can take, see docs/design.md "The request path") as raw JSON-RPC
	// instead of through the go-sdk on both hops (proxy/relay). On by
	// default (nil); `relay: false` keeps every call on the go-sdk path.
	// Read it through RelayOn.
	Relay *bool `yaml:"relay,omitempty"`
}

// RelayOn reports whether the raw tools/call relay is on: unless the file
// says `relay: false`.
func (c *Config) RelayOn() bool { return c.Relay == nil || *c.Relay }

// Sessions configures how the proxy treats session ids it does not know.
type Sessions struct {
	// Strict answers an unknown Mcp-Session-Id with a JSON-RPC 404 instead of
	// recreating the session under the client's id (the default).
	Strict bool `yaml:"strict"`
}

// User maps a bearer token (read from an environment variable) to a user name.
type User struct {
	TokenEnv string `yaml:"tokenEnv"`
	Token    string `yaml:"token"` // for tests and local runs; prefer tokenEnv
	// Admin users read every audit row; others only their own.
	Admin bool `yaml:"admin"`
}

// Project is one MCP endpoint of the proxy, /projects/{name}/mcp.
type Project struct {
	Servers  map[string]*Server `yaml:"servers"`
	Pipeline []Stage            `yaml:"pipeline"`
	Gate     Gate               `yaml:"gate"`
	Prompts  []Prompt           `yaml:"prompts"`
	// RequireAuth refuses requests without a valid bearer token. It defaults to
	// true when the file declares users.
	RequireAuth *bool `yaml:"requireAuth"`
	// Prefix names tools, prompts and resource templates server_name (the
	// default). A project with exactly one server may set it false to pass
	// the upstream's names through unchanged.
	Prefix *bool `yaml:"prefix"`
}

// Server is one upstream MCP server of a project.
type Server struct {
	URL         string       `yaml:"url" json:"url"`
	HealthCheck *HealthCheck `yaml:"healthCheck,omitempty" json:"healthCheck,omitempty"`
	// Headers are sent with every request to the server: put credentials
	// here (valueEnv), never in the URL, where logs and errors would show them.
	Headers map[string]Header `yaml:"headers,omitempty" json:"-"` // never shown by /api/v1/servers
}

// Header is one header value, read from an environment variable (valueEnv)
// or given inline (value; for tests and non-secrets).
type Header struct {
	Value    string `yaml:"value"`
	ValueEnv string `yaml:"valueEnv"`
}

// Resolve returns the header's value.
func (h Header) Resolve(getenv func(string) string) string {
	if h.ValueEnv != "" {
		return getenv(h.ValueEnv)
	}
	return h.Value
}

// HealthCheck configures the probe of one upstream server. With Tool, the
// probe is a readiness probe (tools/call that must round-trip to the
// server's own upstream); without, liveness (tools/list). Seconds may be
// fractional (0.05), which tests use to compress time.
type HealthCheck struct {
	Tool             string         `yaml:"tool,omitempty" json:"tool,omitempty"`
	Arguments        map[string]any `yaml:"arguments,omitempty" json:"arguments,omitempty"`
	IntervalSeconds  float64        `yaml:"intervalSeconds,omitempty" json:"intervalSeconds,omitempty"`
	TimeoutSeconds   float64        `yaml:"timeoutSeconds,omitempty" json:"timeoutSeconds,omitempty"`
	FailureThreshold int            `yaml:"failureThreshold,omitempty" json:"failureThreshold,omitempty"`
}

// Probe defaults, from the seed's reliability notes.
const (
	DefaultProbeInterval  = 60 * time.Second
	DefaultProbeTimeout   = 15 * time.Second
	DefaultProbeThreshold = 3
)

// Interval, Timeout and Threshold resolve the probe's settings, defaults
// included; a nil HealthCheck means liveness with every default.
func (h *HealthCheck) Interval() time.Duration {
	if h == nil || h.IntervalSeconds <= 0 {
		return DefaultProbeInterval
	}
	return time.Duration(h.IntervalSeconds * float64(time.Second))
}

// Timeout bounds one probe.
func (h *HealthCheck) Timeout() time.Duration {
	if h == nil || h.TimeoutSeconds <= 0 {
		return DefaultProbeTimeout
	}
	return time.Duration(h.TimeoutSeconds * float64(time.Second))
}

// Threshold is how many failures in a row make a server unhealthy.
func (h *HealthCheck) Threshold() int {
	if h == nil || h.FailureThreshold <= 0 {
		return DefaultProbeThreshold
	}
	return h.FailureThreshold
}

// Gate configures begin_session gating of a project's tools.
type Gate struct {
	Enabled bool `yaml:"enabled"`
}

// Prompt is one prompt the gate can offer at begin_session.
type Prompt struct {
	Name     string   `yaml:"name"`
	Text     string   `yaml:"text"`
	Priority int      `yaml:"priority"`
	Keywords []string `yaml:"keywords"`
}

// Stage is one pipeline stage: a name and its options. In YAML it is either a
// bare name (`paginate`) or a one-key map (`{paginate: {thresholdBytes: 8192}}`).
type Stage struct {
	Name    string
	Options map[string]any
}

// UnmarshalYAML accepts both forms of a stage.
func (s *Stage) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		s.Name = n.Value
		return nil
	case yaml.MappingNode:
		if len(n.Content) != 2 {
			return fmt.Errorf("line %d: a stage map must have exactly one key, the stage name", n.Line)
		}
		s.Name = n.Content[0].Value
		if n.Content[1].Kind == yaml.ScalarNode && n.Content[1].Tag == "!!null" {
			return nil
		}
		return n.Content[1].Decode(&s.Options)
	}
	return fmt.Errorf("line %d: a stage is a name or a {name: options} map", n.Line)
}

// KnownStages are the stage names a pipeline may use.
var KnownStages = []string{"paginate", "summarize-tree"}

// Load reads and validates the file at path.
func Load(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	c, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return c, nil
}

// Parse decodes and validates a YAML document. Unknown fields are errors.
func Parse(b []byte) (*Config, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var c Config
	if err := dec.Decode(&c); err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// Validate checks the whole configuration and returns every problem found,
// each naming its field.
func (c *Config) Validate() error {
	var errs []error
	bad := func(field, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, a...)))
	}
	if c.Listen == "" {
		c.Listen = "127.0.0.1:8080"
	}
	if c.Audit == "" {
		c.Audit = "sqlite:./mcplocal-audit.db"
	}
	if !strings.HasPrefix(c.Audit, "sqlite:") && !strings.HasPrefix(c.Audit, "postgres://") && !strings.HasPrefix(c.Audit, "postgresql://") && c.Audit != "memory" {
		bad("audit", "%q: want sqlite:PATH, postgres://... or memory", c.Audit)
	}
	if len(c.Projects) == 0 {
		bad("projects", "at least one project is required")
	}
	for i, o := range c.AllowedOrigins {
		if u, err := url.Parse(o); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.User != nil {
			bad(fmt.Sprintf("allowedOrigins[%d]", i), "%q: want scheme://host[:port] (http or https, nothing after the port)", o)
		}
	}
	for i, h := range c.AllowedHosts {
		if h == "" || strings.ContainsAny(h, ":/ ") {
			bad(fmt.Sprintf("allowedHosts[%d]", i), "%q: want a host name without port", h)
		}
	}
	for _, pn := range sortedKeys(c.Projects) {
		p := c.Projects[pn]
		field := "projects." + pn
		if !nameRE.MatchString(pn) {
			bad(field, "project names are lower-case letters, digits, - and _")
		}
		if p == nil {
			bad(field, "empty project")
			continue
		}
		if len(p.Servers) == 0 {
			bad(field+".servers", "at least one upstream server is required")
		}
		for _, sn := range sortedKeys(p.Servers) {
			s := p.Servers[sn]
			sf := field + ".servers." + sn
			if !nameRE.MatchString(sn) {
				bad(sf, "server names are lower-case letters, digits, - and _ (they prefix tool names)")
			}
			if s == nil {
				bad(sf, "empty server")
				continue
			}
			if u, err := url.Parse(s.URL); err == nil && u.User != nil {
				bad(sf+".url", "credentials in the URL would show in logs and errors: put them in headers (with valueEnv)")
			}
			for hn, h := range s.Headers {
				if hn == "" || (h.Value == "") == (h.ValueEnv == "") {
					bad(sf+".headers."+hn, "want a header name and exactly one of value or valueEnv")
				}
			}
			if u, err := url.Parse(s.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				bad(sf+".url", "%q: want an http(s) URL of a Streamable HTTP MCP endpoint", s.URL)
			}
			if h := s.HealthCheck; h != nil {
				if h.IntervalSeconds < 0 || h.TimeoutSeconds < 0 || h.FailureThreshold < 0 {
					bad(sf+".healthCheck", "intervalSeconds, timeoutSeconds and failureThreshold must not be negative")
				}
			}
		}
		if p.Prefix != nil && !*p.Prefix && len(p.Servers) != 1 {
			bad(field+".prefix", "false needs exactly one server (this project has %d): with several, names must say which server they belong to", len(p.Servers))
		}
		sns := sortedKeys(p.Servers)
		for _, a := range sns {
			for _, b := range sns {
				if a != b && strings.HasPrefix(b, a+"_") {
					bad(field+".servers", "%q and %q collide: the prefix %s_ of one starts the names of the other, so a name like %s_x could belong to either; rename one", a, b, a, b)
				}
			}
		}
		for i, st := range p.Pipeline {
			if !contains(KnownStages, st.Name) {
				bad(fmt.Sprintf("%s.pipeline[%d]", field, i), "unknown stage %q (known: %s)", st.Name, strings.Join(KnownStages, ", "))
			}
		}
		for i, pr := range p.Prompts {
			if pr.Name == "" {
				bad(fmt.Sprintf("%s.prompts[%d].name", field, i), "required")
			}
		}
	}
	for _, un := range sortedKeys(c.Users) {
		u := c.Users[un]
		if u.TokenEnv == "" && u.Token == "" {
			bad("users."+un, "tokenEnv (or token) is required")
		}
	}
	if c.LLM != nil {
		if err := c.LLM.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Resolve returns a user's bearer token from its environment variable (or the
// inline token). An empty result means the user cannot authenticate.
func (u User) Resolve(getenv func(string) string) string {
	if u.TokenEnv != "" {
		return getenv(u.TokenEnv)
	}
	return u.Token
}

// AuthRequired reports whether requests to p must carry a valid bearer token.
func (c *Config) AuthRequired(p *Project) bool {
	if p.RequireAuth != nil {
		return *p.RequireAuth
	}
	return len(c.Users) > 0
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
