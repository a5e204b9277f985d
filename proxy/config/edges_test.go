package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHealthCheckSettingsDefaultUnlessPositive: a nil check, a zero and a
// negative value take the default; a positive one is used, fractions of a
// second included.
func TestHealthCheckSettingsDefaultUnlessPositive(t *testing.T) {
	for _, v := range []float64{0, -1} {
		h := &HealthCheck{IntervalSeconds: v, TimeoutSeconds: v, FailureThreshold: int(v)}
		if h.Interval() != DefaultProbeInterval || h.Timeout() != DefaultProbeTimeout || h.Threshold() != DefaultProbeThreshold {
			t.Errorf("value %v: interval %v timeout %v threshold %d, want the defaults", v, h.Interval(), h.Timeout(), h.Threshold())
		}
	}
	var none *HealthCheck
	if none.Interval() != DefaultProbeInterval || none.Timeout() != DefaultProbeTimeout || none.Threshold() != DefaultProbeThreshold {
		t.Error("a nil check does not take the defaults")
	}
	h := &HealthCheck{IntervalSeconds: 0.5, TimeoutSeconds: 1.25, FailureThreshold: 1}
	if h.Interval() != 500*time.Millisecond || h.Timeout() != 1250*time.Millisecond || h.Threshold() != 1 {
		t.Errorf("interval %v timeout %v threshold %d, want 500ms 1.25s 1", h.Interval(), h.Timeout(), h.Threshold())
	}
}

const oneServer = "projects: {p: {servers: {s: {url: 'http://a/mcp'}}}}\n"

// TestAllowedOriginsAreSchemeHostPort: an origin is http(s)://host[:port]
// and nothing else; each other shape is refused by its index.
func TestAllowedOriginsAreSchemeHostPort(t *testing.T) {
	for _, o := range []string{"https://a.example", "http://a.example:8080", "http://127.0.0.1:3000"} {
		if _, err := Parse([]byte(fmt.Sprintf("allowedOrigins: [%q]\n%s", o, oneServer))); err != nil {
			t.Errorf("origin %q refused: %v", o, err)
		}
	}
	for _, o := range []string{"ftp://a.example", "a.example", "https://", "https://a.example/", "https://a.example/x", "https://a.example?x=1", "https://u@a.example", "%zz"} {
		_, err := Parse([]byte(fmt.Sprintf("allowedOrigins: [%q]\n%s", o, oneServer)))
		if err == nil || !strings.Contains(err.Error(), "allowedOrigins[0]") {
			t.Errorf("origin %q: %v, want it refused as allowedOrigins[0]", o, err)
		}
	}
}

// TestAllowedHostsAreBareNames: a host without port, path or spaces.
func TestAllowedHostsAreBareNames(t *testing.T) {
	if _, err := Parse([]byte("allowedHosts: [a.example, localhost]\n" + oneServer)); err != nil {
		t.Errorf("bare hosts refused: %v", err)
	}
	for _, h := range []string{"", "a.example:80", "a.example/x", "a b"} {
		_, err := Parse([]byte(fmt.Sprintf("allowedHosts: [%q]\n%s", h, oneServer)))
		if err == nil || !strings.Contains(err.Error(), "allowedHosts[0]") {
			t.Errorf("host %q: %v, want it refused as allowedHosts[0]", h, err)
		}
	}
}

// TestNegativeHealthCheckValuesAreRefusedEachAlone: any one negative
// setting is refused.
func TestNegativeHealthCheckValuesAreRefusedEachAlone(t *testing.T) {
	for _, hc := range []string{"{intervalSeconds: -1}", "{timeoutSeconds: -1}", "{failureThreshold: -1}"} {
		_, err := Parse([]byte("projects: {p: {servers: {s: {url: 'http://a/mcp', healthCheck: " + hc + "}}}}"))
		if err == nil || !strings.Contains(err.Error(), "must not be negative") {
			t.Errorf("healthCheck %s: %v, want it refused", hc, err)
		}
	}
}

// TestEmptyAndMisnamedProjectsAndServersAreNamed: each is refused with its
// own message, at its field.
func TestEmptyAndMisnamedProjectsAndServersAreNamed(t *testing.T) {
	for doc, want := range map[string]string{
		"projects: {Bad_P: {servers: {s: {url: 'http://a/mcp'}}}}": "projects.Bad_P: project names are lower-case",
		"projects: {p: }":                 "projects.p: empty project",
		"projects: {p: {servers: {s: }}}": "projects.p.servers.s: empty server",
	} {
		if _, err := Parse([]byte(doc)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error containing %q", doc, err, want)
		}
	}
}

// TestStageWithNullOptions: `{paginate: }` and `{paginate: null}` are the
// stage with no options; `{paginate: {pageBytes: 1}}` carries them.
func TestStageWithNullOptions(t *testing.T) {
	for _, p := range []string{"[{paginate: }]", "[{paginate: null}]", "[{paginate: {pageBytes: 1}}]"} {
		c, err := Parse([]byte("projects: {p: {servers: {s: {url: 'http://a/mcp'}}, pipeline: " + p + "}}"))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		st := c.Projects["p"].Pipeline[0]
		if st.Name != "paginate" || (strings.Contains(p, "pageBytes") != (st.Options["pageBytes"] == 1)) {
			t.Errorf("%s: %+v", p, st)
		}
	}
	if _, err := Parse([]byte("projects: {p: {servers: {s: {url: 'http://a/mcp'}}, pipeline: [{paginate: 5}]}}")); err == nil {
		t.Error("a scalar that is not null as a stage's options was accepted")
	}
}

// TestLoadNamesTheFile: a missing file and a bad one are errors naming it.
func TestLoadNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(filepath.Join(dir, "missing.yaml")); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("a missing file: %v", err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("listen: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(bad); err == nil || !strings.Contains(err.Error(), "bad.yaml") {
		t.Errorf("a bad file: %v", err)
	}
}
