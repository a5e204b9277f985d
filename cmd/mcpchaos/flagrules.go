package main

import (
	"flag"
	"fmt"
)

// flagRule says how two of a command's flags go together, so that a flag a
// command would silently drop in some company is refused there instead:
// with needs, flag means nothing without other; without, the two contradict
// each other (one of them would be ignored).
type flagRule struct {
	flag, other string
	needs       bool
	why         string
}

// needs: flag means nothing without other.
func needs(flag, other, why string) flagRule {
	return flagRule{flag: flag, other: other, needs: true, why: why}
}

// excludes: flag and other cannot both be honoured.
func excludes(flag, other, why string) flagRule {
	return flagRule{flag: flag, other: other, why: why}
}

// checkFlags refuses, naming both flags, the first rule the flags given on
// fs break (a usage error: exit 2), then hands fs to flagsChecked.
func checkFlags(cmd string, fs *flag.FlagSet, rules ...flagRule) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for _, r := range rules {
		switch {
		case r.needs && given[r.flag] && !given[r.other]:
			return fmt.Errorf("%s: --%s needs --%s: %s", cmd, r.flag, r.other, r.why)
		case !r.needs && given[r.flag] && given[r.other]:
			return fmt.Errorf("%s: --%s and --%s: give one: %s", cmd, r.flag, r.other, r.why)
		}
	}
	return flagsChecked(cmd, fs)
}

// flagsChecked sees every command's flags once parsed and checked, before
// the command does anything with them: what flags a command takes is read
// from it, so a new flag cannot escape the test of every pair of them.
var flagsChecked = func(cmd string, fs *flag.FlagSet) error { return nil }
