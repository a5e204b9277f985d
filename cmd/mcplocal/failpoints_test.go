package main

import (
	"log/slog"
	"testing"
)

func TestFailpointsNeedExplicitEnable(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	t.Setenv(failpointsEnv, "tools/call=docmost_update_page:panic")
	t.Setenv(enableFailpointsEnv, "")
	if fps, err := failpoints(logger); err != nil || fps != nil {
		t.Fatalf("without %s=1 the failpoints were armed: %v, %v", enableFailpointsEnv, fps, err)
	}
	t.Setenv(enableFailpointsEnv, "1")
	if fps, err := failpoints(logger); err != nil || fps == nil {
		t.Fatalf("with %s=1: %v, %v; want the failpoints armed", enableFailpointsEnv, fps, err)
	}
}
