package config

import (
	"reflect"
	"testing"
)

// FuzzParse feeds arbitrary bytes to the config loader: it never panics,
// and a file it accepts marshals to one it reads back equal (what the
// harness relies on to hand a config to a proxy process).
func FuzzParse(f *testing.F) {
	f.Add([]byte("projects:\n  p:\n    servers:\n      s: {url: http://127.0.0.1:1/mcp}\n"))
	f.Add([]byte("listen: 127.0.0.1:8080\naudit: memory\nusers:\n  alice: {token: a, admin: true}\nallowedOrigins: [https://x.example]\nprojects:\n  p:\n    servers:\n      s: {url: http://127.0.0.1:1/mcp}\n    pipeline: [paginate, {summarize-tree: {budgetMs: 5}}]\n"))
	f.Add([]byte("projects: {p: {servers: {s: {url: 'ftp://x'}}}}\n"))
	f.Add([]byte("{{{"))
	f.Add([]byte("projects:\n  p: &a\n    servers: *a\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err != nil {
			return
		}
		b, err := Marshal(c)
		if err != nil {
			t.Fatalf("an accepted config does not marshal: %v", err)
		}
		c2, err := Parse(b)
		if err != nil {
			t.Fatalf("an accepted config marshals to one Parse refuses: %v\n%s", err, b)
		}
		if !reflect.DeepEqual(c, c2) {
			t.Fatalf("round trip changed the config:\n%s", b)
		}
	})
}
