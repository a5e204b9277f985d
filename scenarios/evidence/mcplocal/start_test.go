package mcplocal

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/world"
)

// httpGetter reads a proxy's JSON API over HTTP.
type httpGetter struct{ base string }

func (g httpGetter) GetJSON(ctx context.Context, path string, v any, apiErr *string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.base+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", path, resp.Status, *apiErr)
	}
	return nil
}

func oneServerWorld(store string) *world.World {
	return &world.World{Store: store, Projects: map[string]*world.WorldProject{
		"docmost": {Servers: map[string]*world.WorldServer{"docmost": {URL: "http://127.0.0.1:1/mcp"}}},
	}}
}

// Start serves the world under the bounds given: the proxy listens where
// it was told, runs under the bounds' knobs, and its API names the world's
// server.
func TestStartServesTheWorldUnderItsBounds(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b := CompressedBounds().WithD(world.BoundRequest, 1234*time.Millisecond)
	p, err := Start(ctx, Run{World: oneServerWorld("sqlite:" + filepath.Join(t.TempDir(), "audit.db")), Bounds: b}, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	if p.Addr() == "" {
		t.Fatal("the proxy listens nowhere")
	}
	if got := p.Knobs().RequestDeadline; got != 1234*time.Millisecond {
		t.Errorf("request deadline %v, want the bound's 1.234s", got)
	}
	if in := Instance(ctx, httpGetter{base: "http://" + p.Addr()}, "docmost"); in.Server != "docmost" || in.Project != "docmost" {
		t.Errorf("the proxy's instance of docmost: %+v", in)
	}
}

// A proxy that cannot start is an error, not a proxy: a world mcplocal
// refuses (two users sharing a token), or an address already taken.
func TestStartFailsWithoutAProxy(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	w := oneServerWorld("memory")
	w.Users = map[string]world.User{"alice": {Token: "same"}, "bob": {Token: "same"}}
	if p, err := Start(ctx, Run{World: w, Bounds: CompressedBounds()}, "127.0.0.1:0"); p != nil || err == nil {
		t.Errorf("two users with one token: proxy %v, error %v; want an error alone", p, err)
	}
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	w = oneServerWorld("sqlite:" + filepath.Join(t.TempDir(), "audit.db"))
	if p, err := Start(ctx, Run{World: w, Bounds: CompressedBounds()}, taken.Addr().String()); p != nil || err == nil {
		t.Errorf("an address in use: proxy %v, error %v; want an error alone", p, err)
	}
	if p, err := Start(ctx, Run{World: oneServerWorld("nosuch:store"), Bounds: CompressedBounds()}, "127.0.0.1:0"); p != nil || err == nil {
		t.Errorf("a store mcplocal cannot open: proxy %v, error %v; want an error alone", p, err)
	}
}

// TraceCodes reports a store it cannot reach as an error.
func TestTraceCodesOfAnUnreachableStoreIsAnError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: the connection is refused at once
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if codes, err := TraceCodes(ctx, "postgres://u:p@"+addr+"/audit?sslmode=disable"); err == nil {
		t.Errorf("codes %v from a store nobody serves, want an error", codes)
	}
}
