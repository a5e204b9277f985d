package harness

import (
	"fmt"
	"os"
	"testing"

	"github.com/mcpchaos/mcpchaos/proxy/config"
)

// A world's relay: Relay and NoRelay force it on and off; a world that
// chooses neither follows the proxy's default (on) unless MCPCHAOS_RELAY=0.
// The in-process proxy reads the Config as built, a process target reads
// it through config.Marshal: both must see the same value.
func TestRelayForFollowsOptionsThenTheEnvThenTheDefault(t *testing.T) {
	const unset = "(unset)"
	for _, c := range []struct {
		opts EnvOptions
		env  string
		want *bool // nil: the key left out, the proxy's default
		on   bool
	}{
		{EnvOptions{}, unset, nil, true},
		{EnvOptions{}, "1", nil, true},
		{EnvOptions{}, "0", new(false), false},
		{EnvOptions{}, "", nil, true},
		{EnvOptions{Relay: true}, unset, new(true), true},
		{EnvOptions{Relay: true}, "0", new(true), true},
		{EnvOptions{Relay: true}, "1", new(true), true},
		{EnvOptions{NoRelay: true}, unset, new(false), false},
		{EnvOptions{NoRelay: true}, "1", new(false), false},
		{EnvOptions{NoRelay: true}, "0", new(false), false},
		{EnvOptions{Relay: true, NoRelay: true}, unset, new(false), false},
	} {
		name := fmt.Sprintf("Relay=%v,NoRelay=%v,%s=%s", c.opts.Relay, c.opts.NoRelay, RelayEnv, c.env)
		t.Run(name, func(t *testing.T) {
			t.Setenv(RelayEnv, c.env)
			if c.env == unset {
				os.Unsetenv(RelayEnv) // t.Setenv restores it afterwards
			}
			got := relayFor(c.opts)
			if (got == nil) != (c.want == nil) || (got != nil && *got != *c.want) {
				t.Fatalf("relayFor = %s, want %s", show(got), show(c.want))
			}
			cfg := &config.Config{Relay: got, Projects: map[string]*config.Project{
				Project: {Servers: map[string]*config.Server{"docmost": {URL: "http://127.0.0.1:1/mcp"}}},
			}}
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			if cfg.RelayOn() != c.on {
				t.Errorf("in process: RelayOn() = %v, want %v", cfg.RelayOn(), c.on)
			}
			doc, err := config.Marshal(cfg) // what Binary.Start writes
			if err != nil {
				t.Fatal(err)
			}
			back, err := config.Parse(doc)
			if err != nil {
				t.Fatal(err)
			}
			if back.RelayOn() != c.on {
				t.Errorf("the process target's file says RelayOn() = %v, want %v:\n%s", back.RelayOn(), c.on, doc)
			}
		})
	}
}

func show(b *bool) string {
	if b == nil {
		return "nil"
	}
	return fmt.Sprint(*b)
}
