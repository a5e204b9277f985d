package harness

import (
	"os"
	"slices"
	"testing"
)

// A known mutant switched on in the shared tree that judges the known
// mutants (KnownMutantEnv) reaches every proxy the harness starts: the
// binary and foreign targets start theirs with this process's environment,
// and a container, which gets none of it, is given the variable. With it
// unset, no container is given it.
func TestEveryProxyTheHarnessStartsIsGivenTheKnownMutant(t *testing.T) {
	t.Setenv(KnownMutantEnv, "bare-404")
	want := KnownMutantEnv + "=bare-404"
	if env := (&Binary{}).environLocked(); !slices.Contains(env, want) {
		t.Errorf("the binary target's environment has no %s", want)
	}
	if env := withoutKnobs(os.Environ()); !slices.Contains(env, want) {
		t.Errorf("the foreign target's environment has no %s", want)
	}
	if got := containerEnv([]string{"MCPCTL_X=1"}); got[KnownMutantEnv] != "bare-404" || got["MCPCTL_X"] != "1" {
		t.Errorf("a container's environment is %v, want %s and MCPCTL_X=1", got, want)
	}
	os.Unsetenv(KnownMutantEnv) // t.Setenv restores it afterwards
	if got := containerEnv(nil); len(got) != 0 {
		t.Errorf("with no known mutant on, a container's environment is %v, want it empty", got)
	}
}
