package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
)

// stopped is a context already cancelled: a command a test expects to
// refuse its input before it starts anything stops at its first step, if
// it does not refuse, instead of running a whole catalogue, bench or build.
func stopped() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// A command that takes no arguments besides its flags refuses one, naming
// it, before it does anything: `mcpchaos run paginate` is not a whole run
// with the word dropped (a usage error: exit 2).
func TestCommandsRefuseAStrayArgument(t *testing.T) {
	for _, args := range [][]string{
		{"run", "paginate"},
		{"run", "--seed", "3", "paginate"},
		{"faults", "latency"},
		{"repro", "hang-1800s", "300"},
		{"fake", "upstream", "docmost", "127.0.0.1:9100"},
		{"fake", "llm", "--provider", "openai", "ok"},
		{"soak", "100"},
		{"bench", "mcplocal"},
		{"canary", "--sdk", "m@v1", "x"},
		{"mutants", "x"},
		{"mutants", "--generic", "proxy/trace", "x"},
	} {
		err, _ := chaosFlags(t, args)
		stray := args[len(args)-1]
		if err == nil || errors.Is(err, errFlagsChecked) || !strings.Contains(err.Error(), "unexpected argument \""+stray+"\"") {
			t.Errorf("mcpchaos %s: %v, want the argument %q refused", strings.Join(args, " "), err, stray)
		}
	}
}

// replay --help prints its usage and is no failure, as every command's is.
func TestReplayHelpIsNoFailure(t *testing.T) {
	var stderr bytes.Buffer
	err := run(stopped(), []string{"replay", "--help"}, io.Discard, &stderr)
	if !errors.Is(err, flag.ErrHelp) || !strings.Contains(stderr.String(), "usage: mcpchaos replay FILE") {
		t.Errorf("replay --help: %v, want the help exit\n%s", err, stderr.String())
	}
}

// A flag a command does not know is refused on the command's own stderr
// (the writer it was given), naming the flag, with exit 2.
func TestUnknownFlagsAreToldOnTheCommandsStderr(t *testing.T) {
	for _, args := range [][]string{
		{"run"}, {"faults"}, {"bench"}, {"soak"}, {"canary"}, {"mutants"}, {"mutants", "--generic", "proxy/trace"},
		{"repro", "hang-1800s"}, {"replay", "x.json"}, {"fake", "upstream", "docmost"}, {"fake", "llm"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(stopped(), append(args, "--nosuchflag"), &stdout, &stderr)
		if err == nil {
			t.Errorf("mcpchaos %s --nosuchflag was accepted", strings.Join(args, " "))
		}
		if !strings.Contains(stderr.String(), "flag provided but not defined: -nosuchflag") {
			t.Errorf("mcpchaos %s --nosuchflag: the refusal is not on its stderr: %q", strings.Join(args, " "), stderr.String())
		}
	}
}

// A stray argument is answered with the command's usage on its stderr.
func TestAStrayArgumentShowsTheUsage(t *testing.T) {
	old := flagsChecked
	flagsChecked = func(string, *flag.FlagSet) error { return errFlagsChecked }
	defer func() { flagsChecked = old }()
	for _, c := range []struct {
		args  []string
		usage string
	}{
		{[]string{"run", "x"}, "where the proxy under test runs"},
		{[]string{"faults", "x"}, "usage: mcpchaos faults"},
		{[]string{"repro", "hang-1800s", "x"}, "usage: mcpchaos repro hang-1800s"},
		{[]string{"fake", "upstream", "docmost", "x"}, "mcpchaos fake upstream everything [--listen ADDR]"},
		{[]string{"fake", "llm", "--provider", "openai", "x"}, "mcpchaos fake llm --provider anthropic|openai"},
		{[]string{"soak", "x"}, "Usage: mcpchaos soak"},
		{[]string{"bench", "x"}, "Usage: mcpchaos bench"},
		{[]string{"canary", "--sdk", "m@v1", "x"}, "usage: mcpchaos canary"},
		{[]string{"mutants", "x"}, "usage: mcpchaos mutants [--only"},
		{[]string{"mutants", "--generic", "proxy/trace", "x"}, "usage: mcpchaos mutants --generic"},
	} {
		var stderr bytes.Buffer
		err := run(stopped(), c.args, io.Discard, &stderr)
		if err == nil || !strings.Contains(err.Error(), "unexpected argument") || !strings.Contains(stderr.String(), c.usage) {
			t.Errorf("mcpchaos %s: %v, want the usage (%q):\n%s", strings.Join(c.args, " "), err, c.usage, stderr.String())
		}
	}
}
