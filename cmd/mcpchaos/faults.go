package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

func runFaults(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("faults", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: mcpchaos faults

Lists the fault registry: each fault's name, class, parameters with their
defaults, when it strikes (before start, before the call, midway) and what it
requires (a target capability, toxiproxy, a fake). Inject one into every
selected scenario with: mcpchaos run --fault NAME[:k=v,k=v] (docs/faults.md).
`)
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("faults: unexpected argument %q", fs.Arg(0))
	}
	if err := checkFlags("faults", fs); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FAULT\tCLASS\tPARAMETERS (defaults)\tSTRIKES\tREQUIRES\tWHAT IT DOES")
	for _, k := range harness.Faults() {
		f := k.Default()
		var params []string
		for _, p := range k.Params {
			params = append(params, p.Name+"="+p.Default)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", k.Name, k.Class, dash(strings.Join(params, ",")), f.Strikes(),
			dash(strings.Join(f.Requires(), ", ")), k.Summary)
	}
	_ = tw.Flush()
	fmt.Fprintln(stdout, "\nNetwork faults take link="+strings.Join(harness.Links, "|")+" (docmost, proxy to upstream, is the default).")
	fmt.Fprintln(stdout, "Inject one: mcpchaos run --fault latency:link=llm,latencyMs=300 --label paginate")
	return nil
}
