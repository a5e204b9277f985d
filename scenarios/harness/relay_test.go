package harness

import (
	"fmt"
	"os"
	"testing"
)

// A world's relay: Relay and NoRelay force it on and off; a world that
// chooses neither follows the proxy's default (on) unless MCPCHAOS_RELAY=0.
// (That the proxy reads the relay alike in process and from its file is
// the adapter's test: TestAWorldsRelayReachesTheConfiguration.)
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
		})
	}
}

func show(b *bool) string {
	if b == nil {
		return "nil"
	}
	return fmt.Sprint(*b)
}
