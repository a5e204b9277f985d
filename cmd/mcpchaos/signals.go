package main

import (
	"context"
	"fmt"
	"io"
	"os"
)

// exitInterrupted is the status of a run ended by a signal: its partial
// report was printed (first signal) or not (second signal).
const exitInterrupted = 130

// watchSignals turns the first signal into a cancelled context, so a long
// command stops at its next step and prints what it has, and the second into
// an immediate exit: a user who asks twice is never ignored, whatever the
// first one is still waiting for. Children started by the harness die with
// the process (their parent-death signal).
func watchSignals(parent context.Context, sigs <-chan os.Signal, stderr io.Writer, exit func(int)) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	go func() {
		select {
		case sig := <-sigs:
			fmt.Fprintf(stderr, "\nmcpchaos: %v: stopping after the current step and printing what ran; %v again quits now\n", sig, sig)
			cancel()
		case <-ctx.Done():
			return
		}
		sig := <-sigs
		fmt.Fprintf(stderr, "\nmcpchaos: %v again: quitting now\n", sig)
		exit(exitInterrupted)
	}()
	return ctx, cancel
}
