// Package bundle is what a replay of one request needs, taken from the proxy
// that served it: the request's audit rows, the config with every secret
// removed, the knob values in force, the proxy's version and the shapes of
// the answers (sizes, content kinds, outcomes, error texts). A bundle never
// holds a secret nor an answer's content; it holds private content (prompt
// texts, health-check arguments) only when it was asked for with
// Options.Private.
package bundle

import (
	"fmt"
	"net/url"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/mcpchaos/mcpchaos/proxy/config"
	"github.com/mcpchaos/mcpchaos/proxy/redact"
)

// Mask replaces every secret and every private text a bundle leaves out.
const Mask = redact.Mask

// Options says what a bundle may carry besides shapes.
type Options struct {
	// Private keeps private content (prompt texts, health-check arguments,
	// stage options' texts). Secrets are removed whatever it says.
	Private bool
}

// Scrub returns a deep copy of c without its secrets: user tokens, header
// values, the audit DSN's password, every URL's credentials and query
// string, and (unless o.Private) the private texts. Names stay (users,
// projects, servers, header names, the environment variables a secret is
// read from), so a replay can rebuild the same topology. c is not changed.
func Scrub(c *config.Config, o Options) (*config.Config, error) {
	if c == nil {
		return nil, fmt.Errorf("bundle: scrub a nil config")
	}
	b, err := config.Marshal(c)
	if err != nil {
		return nil, err
	}
	var out config.Config
	if err := yaml.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("bundle: copy the config: %w", err)
	}
	out.Audit = scrubDSN(out.Audit)
	if out.LLM != nil {
		for name, p := range out.LLM.Providers {
			p.URL = scrubURL(p.URL)
			p.APIKey = ""
			out.LLM.Providers[name] = p
		}
	}
	for name, u := range out.Users {
		u.Token = mask(u.Token)
		out.Users[name] = u
	}
	for i, o := range out.AllowedOrigins {
		out.AllowedOrigins[i] = scrubURL(o)
	}
	for _, p := range out.Projects {
		if p == nil {
			continue
		}
		for _, s := range p.Servers {
			if s == nil {
				continue
			}
			s.URL = scrubURL(s.URL)
			for h, v := range s.Headers {
				v.Value = mask(v.Value)
				s.Headers[h] = v
			}
			if s.HealthCheck != nil && !o.Private {
				s.HealthCheck.Arguments = scrubAny(s.HealthCheck.Arguments, maskAll).(map[string]any)
			}
		}
		for i := range p.Prompts {
			if !o.Private {
				p.Prompts[i].Text = maskLen(p.Prompts[i].Text)
			}
		}
		for i := range p.Pipeline {
			f := redactText
			if !o.Private {
				f = maskAll
			}
			if p.Pipeline[i].Options != nil {
				p.Pipeline[i].Options = scrubAny(p.Pipeline[i].Options, f).(map[string]any)
			}
		}
	}
	return &out, nil
}

// mask hides a non-empty secret; an empty one stays empty (it tells the
// reader the value comes from the environment variable).
func mask(s string) string {
	if s == "" {
		return ""
	}
	return Mask
}

// maskLen hides a private text but keeps its size, which a replay uses.
func maskLen(s string) string {
	if s == "" {
		return ""
	}
	return fmt.Sprintf("%s (%d bytes)", Mask, len(s))
}

func maskAll(s string) string { return mask(s) }

func redactText(s string) string { return redact.Text(s) }

// scrubAny applies f to every string inside v (maps, slices, scalars),
// keeping numbers and booleans: thresholds and budgets are shapes.
func scrubAny(v any, f func(string) string) any {
	switch t := v.(type) {
	case string:
		return f(t)
	case map[string]any:
		if t == nil {
			return t
		}
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = scrubAny(x, f)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = scrubAny(x, f)
		}
		return out
	default:
		return v
	}
}

// scrubURL removes a URL's whole userinfo (a user name alone may be a
// token: https://TOKEN@host) and its query string and fragment (where API
// keys travel). Text that does not parse as a URL with a host is masked.
func scrubURL(s string) string {
	if s == "" {
		return ""
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return redactWhole(s)
	}
	if u.User != nil {
		u.User = url.User(Mask)
	}
	if u.RawQuery != "" || u.ForceQuery {
		u.RawQuery, u.ForceQuery = Mask, false
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}

// redactWhole keeps a value that holds nothing a secret could hide in (no
// userinfo, query or keyword), and masks any other.
func redactWhole(s string) string {
	if strings.ContainsAny(s, "@?=#") {
		return Mask
	}
	return s
}

// scrubDSN removes the audit DSN's secrets: a URL DSN (postgres://) as
// scrubURL, a keyword DSN (host=... password=...) keyword by keyword
// keeping only the harmless keywords, a file DSN (sqlite:PATH, memory) as it
// is.
func scrubDSN(dsn string) string {
	switch {
	case dsn == "" || dsn == "memory":
		return dsn
	case strings.Contains(dsn, "://"):
		return scrubURL(dsn)
	case strings.HasPrefix(dsn, "sqlite:"):
		path := strings.TrimPrefix(dsn, "sqlite:")
		if i := strings.IndexByte(path, '?'); i >= 0 {
			path = path[:i] + "?" + Mask
		}
		return "sqlite:" + path
	case strings.Contains(dsn, "="):
		return scrubKeywords(dsn)
	default:
		return redactWhole(dsn)
	}
}

// harmless are the keyword DSN's keywords kept as they are.
var harmless = map[string]bool{"host": true, "port": true, "dbname": true, "sslmode": true, "connect_timeout": true}

func scrubKeywords(dsn string) string {
	var out []string
	for _, f := range strings.Fields(dsn) {
		k, _, ok := strings.Cut(f, "=")
		if ok && harmless[strings.ToLower(k)] {
			out = append(out, f)
			continue
		}
		if ok {
			out = append(out, k+"="+Mask)
			continue
		}
		out = append(out, Mask) // a quoted value's continuation, or noise
	}
	return strings.Join(out, " ")
}
