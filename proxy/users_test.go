package proxy

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/proxy/config"
)

func TestTwoUsersWithOneTokenIsAConfigError(t *testing.T) {
	cfg := &config.Config{
		Listen: "127.0.0.1:0", Audit: "memory",
		Users:    map[string]config.User{"alice": {Token: "same"}, "bob": {Token: "same"}},
		Projects: map[string]*config.Project{"p": {Servers: map[string]*config.Server{"s": {URL: "http://127.0.0.1:1/mcp"}}}},
	}
	p, err := New(context.Background(), cfg, Options{Getenv: func(string) string { return "" }})
	if err == nil {
		_ = p.Close(context.Background())
		t.Fatal("two users with one token were accepted: one would silently act as the other")
	}
	if !strings.Contains(err.Error(), "alice") || !strings.Contains(err.Error(), "bob") {
		t.Errorf("the error should name both users: %v", err)
	}
	cfg.Users["bob"] = config.User{Token: "other"}
	p, err = New(context.Background(), cfg, Options{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatalf("distinct tokens: %v", err)
	}
	_ = p.Close(context.Background())
}
