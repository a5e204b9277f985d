package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/fakes/upstream"
)

// TestFakeUpstreamHelpNamesEveryTool: 'mcpchaos fake upstream KIND --help'
// names every tool the fake serves, as tools/list gives them.
func TestFakeUpstreamHelpNamesEveryTool(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for kind, start := range map[string]func(upstream.Options) (*upstream.Server, error){"docmost": upstream.NewDocmost, "everything": upstream.NewEverything} {
		var out, errOut bytes.Buffer
		if err := run(ctx, []string{"fake", "upstream", kind, "--help"}, &out, &errOut); err == nil {
			t.Errorf("%s --help: want the usage exit, got none", kind)
		}
		help := out.String() + errOut.String()
		_, section, _ := strings.Cut(help, "mcpchaos fake upstream "+kind)
		section, _, _ = strings.Cut(section, "mcpchaos fake ")
		s, err := start(upstream.Options{})
		if err != nil {
			t.Fatal(err)
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.URL(), MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for tool, err := range cs.Tools(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			n++
			if !regexp.MustCompile(`\b` + regexp.QuoteMeta(tool.Name) + `\b`).MatchString(section) {
				t.Errorf("fake upstream %s --help does not name its tool %s:\n%s", kind, tool.Name, help)
			}
		}
		if n == 0 {
			t.Errorf("fake upstream %s lists no tools", kind)
		}
		_ = cs.Close()
		_ = s.Close()
	}
}
