package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/mcpchaos/mcpchaos/fakes/upstream"
)

func runFake(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) < 2 || args[0] != "upstream" || args[1] != "docmost" {
		fmt.Fprint(stderr, "usage: mcpchaos fake upstream docmost [--listen ADDR]\n")
		return exitError(2)
	}
	fs := flag.NewFlagSet("fake upstream docmost", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on")
	if err := fs.Parse(args[2:]); err != nil {
		return err
	}
	s, err := upstream.NewDocmost(upstream.Options{Addr: *listen})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "fake upstream docmost serving MCP at %s\n", s.URL())
	<-ctx.Done()
	return s.Close()
}
