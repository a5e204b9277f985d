package bundle

import (
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/proxy/config"
	"github.com/mcpchaos/mcpchaos/proxy/llm"
)

var secretRE = regexp.MustCompile(`S3CRET-[a-z0-9]+`)

// Scrub, field by field, on values validation would refuse too: the bundle
// does not lean on the config having been validated.
func TestScrubRemovesEverySecret(t *testing.T) {
	c := &config.Config{
		Listen: "127.0.0.1:8080",
		Audit:  "postgres://S3CRET-u:S3CRET-p@db:5432/audit?sslpassword=S3CRET-q",
		LLM: &llm.Config{Primary: "a", Providers: map[string]llm.ProviderConfig{
			"a": {Kind: "openai", URL: "http://S3CRET-lu:S3CRET-lp@h/v1?key=S3CRET-lq#S3CRET-lf", Model: "m", APIKey: "S3CRET-key", APIKeyEnv: "KEY_ENV"},
		}},
		Users:          map[string]config.User{"alice": {Token: "S3CRET-tok", TokenEnv: "TOK_ENV", Admin: true}},
		AllowedOrigins: []string{"https://S3CRET-ou@o.example?S3CRET-oq"},
		Projects: map[string]*config.Project{"p": {
			Servers: map[string]*config.Server{"s": {
				URL:         "https://S3CRET-su@up.example/mcp?token=S3CRET-sq",
				Headers:     map[string]config.Header{"Authorization": {Value: "Bearer S3CRET-h"}, "X-Key": {ValueEnv: "H_ENV"}},
				HealthCheck: &config.HealthCheck{Tool: "search", Arguments: map[string]any{"q": "PRIV-a", "limit": 3}},
			}},
			Pipeline: []config.Stage{{Name: "paginate", Options: map[string]any{"note": "password=S3CRET-st", "thresholdBytes": 8192}}},
			Prompts:  []config.Prompt{{Name: "hello", Text: "PRIV-prompt"}},
		}},
	}
	for _, private := range []bool{false, true} {
		sc, err := Scrub(c, Options{Private: private})
		if err != nil {
			t.Fatal(err)
		}
		y, err := config.Marshal(sc)
		if err != nil {
			t.Fatal(err)
		}
		if s := secretRE.FindAllString(string(y)+sc.LLM.Providers["a"].APIKey, -1); len(s) > 0 {
			t.Errorf("private=%v: secrets left %v in\n%s", private, s, y)
		}
		if got := strings.Count(string(y), "PRIV-"); (got > 0) != private {
			t.Errorf("private=%v: %d private texts in\n%s", private, got, y)
		}
		for _, keep := range []string{"KEY_ENV", "TOK_ENV", "H_ENV", "X-Key", "Authorization", "up.example/mcp", "db:5432/audit", "thresholdBytes: 8192", "limit: 3"} {
			if !strings.Contains(string(y), keep) {
				t.Errorf("private=%v: %q lost from\n%s", private, keep, y)
			}
		}
	}
	if c.Users["alice"].Token != "S3CRET-tok" || c.Projects["p"].Servers["s"].Headers["Authorization"].Value != "Bearer S3CRET-h" {
		t.Errorf("Scrub changed the config it was given")
	}
}

// DSNs of every form the audit field takes.
func TestScrubDSN(t *testing.T) {
	for in, want := range map[string]string{
		"memory":                        "memory",
		"sqlite:./a.db":                 "sqlite:./a.db",
		"sqlite:./a.db?_pragma=k":       "sqlite:./a.db?REDACTED",
		"host=h port=5 password=S3CRET": "host=h port=5 password=REDACTED",
		"user=S3CRET dbname=d":          "user=REDACTED dbname=d",
		"postgres://u:S3CRET@h/db":      "postgres://REDACTED@h/db",
	} {
		if got := scrubDSN(in); got != want {
			t.Errorf("scrubDSN(%q) = %q, want %q", in, got, want)
		}
	}
}

// Text on row texts: a URL's whole userinfo and query go, keyword secrets go.
func TestTextRemovesURLCredentials(t *testing.T) {
	got := Text("Post http://S3CRET-u:S3CRET-p@h:1/v1?k=S3CRET-q: timeout token=S3CRET-t")
	if s := secretRE.FindAllString(got, -1); len(s) > 0 || !strings.Contains(got, "http://REDACTED@h:1/v1?REDACTED") {
		t.Errorf("Text = %q", got)
	}
}

// classified lists every text field of the config, as Scrub treats it. A
// field added to the config fails this test until Scrub is taught what it
// is: a name kept, a secret removed, or a private text.
var classified = map[string]string{
	"Listen": "kept", "Audit": "scrubDSN", "Relay": "kept", "AllowedHosts": "kept", "AllowedOrigins": "scrubURL",
	"LLM.Primary": "kept", "LLM.Providers.Name": "kept", "LLM.Providers.Kind": "kept", "LLM.Providers.URL": "scrubURL",
	"LLM.Providers.Model": "kept", "LLM.Providers.APIKeyEnv": "kept", "LLM.Providers.Fallbacks": "kept", "LLM.Providers.APIKey": "emptied",
	"Users.TokenEnv": "kept", "Users.Token": "mask",
	"Projects.Servers.URL": "scrubURL", "Projects.Servers.Headers.Value": "mask", "Projects.Servers.Headers.ValueEnv": "kept",
	"Projects.Servers.HealthCheck.Tool": "kept", "Projects.Servers.HealthCheck.Arguments": "private",
	"Projects.Pipeline.Name": "kept", "Projects.Pipeline.Options": "private",
	"Projects.Prompts.Name": "kept", "Projects.Prompts.Text": "private", "Projects.Prompts.Keywords": "kept",
}

func TestEveryConfigTextIsClassified(t *testing.T) {
	var found []string
	var walk func(reflect.Type, string)
	walk = func(ty reflect.Type, path string) {
		for ty.Kind() == reflect.Pointer || ty.Kind() == reflect.Slice && ty.Elem().Kind() != reflect.String || ty.Kind() == reflect.Map && ty.Elem().Kind() != reflect.Interface {
			ty = ty.Elem()
		}
		switch {
		case ty.Kind() == reflect.Struct:
			for i := range ty.NumField() {
				f := ty.Field(i)
				if !f.IsExported() {
					continue
				}
				p := f.Name
				if path != "" {
					p = path + "." + f.Name
				}
				walk(f.Type, p)
			}
		case ty.Kind() == reflect.String, ty.Kind() == reflect.Slice, ty.Kind() == reflect.Map, ty.Kind() == reflect.Bool && path == "Relay":
			found = append(found, path)
		}
	}
	walk(reflect.TypeFor[config.Config](), "")
	sort.Strings(found)
	seen := map[string]bool{}
	for _, f := range found {
		seen[f] = true
	}
	for f := range classified {
		if !seen[f] {
			t.Errorf("classified field %s is not in the config any more", f)
		}
	}
	for _, f := range found {
		if classified[f] == "" {
			t.Errorf("config field %s holds text Scrub does not know: decide whether it is a name, a secret or private, in Scrub and here", f)
		}
	}
}
