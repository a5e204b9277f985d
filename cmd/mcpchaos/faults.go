package main

import (
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	fakellm "github.com/mcpchaos/mcpchaos/fakes/llm"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

func runFaults(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("faults", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FAULT\tCLASS\tPARAMETERS\tWHAT IT DOES")
	for _, f := range harness.Faults() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", f.Name, f.Class, dash(f.Params), f.Summary)
	}
	_ = tw.Flush()
	fmt.Fprintln(stdout, "\nLLM behaviours (fault llm-<behaviour>; also `mcpchaos fake llm --default`):")
	tw = tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	for _, k := range fakellm.Catalogue() {
		fmt.Fprintf(tw, "  %s\t%s\n", k.Kind, k.Summary)
	}
	_ = tw.Flush()
	fmt.Fprintln(stdout, "\nNetwork faults take link=docmost (proxy to upstream, the default) or link=llm (proxy to the primary LLM).")
	return nil
}
