package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
)

func init() {
	// The bandwidth toxic logs through zerolog's global logger; keep runs quiet.
	zerolog.SetGlobalLevel(zerolog.Disabled)
}

// Toxi is an in-process toxiproxy: links in front of the fakes, toxics on them.
// Close returns its goroutines to baseline.
type Toxi struct {
	srv  *toxiproxy.ApiServer
	mu   sync.Mutex
	once sync.Once
}

// NewToxi starts an empty in-process toxiproxy.
func NewToxi() *Toxi {
	return &Toxi{srv: toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())}
}

// Link is one toxiproxy proxy: clients dial Addr, bytes flow to the upstream.
type Link struct {
	p *toxiproxy.Proxy
}

// Link creates a proxy named name listening on a free loopback port in front
// of upstream (host:port).
func (t *Toxi) Link(name, upstream string) (*Link, error) {
	return t.LinkAt(name, "127.0.0.1:0", upstream)
}

// LinkAt is Link on a fixed listen address (to restore a link after Down).
func (t *Toxi) LinkAt(name, listen, upstream string) (*Link, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := toxiproxy.NewProxy(t.srv, name, listen, upstream)
	if err := t.srv.Collection.Add(p, true); err != nil {
		return nil, fmt.Errorf("toxiproxy link %s: %w", name, err)
	}
	return &Link{p: p}, nil
}

// Addr is the address clients dial.
func (l *Link) Addr() string { return l.p.Listen }

// Toxic adds a toxic: typ is a toxiproxy type (latency, bandwidth, timeout,
// reset_peer, slicer, limit_data, slow_close), stream "upstream" (client to
// server) or "downstream", attrs its attributes. Toxicity is always 1.0: the
// Go client would send 0 as "never".
func (l *Link) Toxic(name, typ, stream string, attrs map[string]any) error {
	b, err := json.Marshal(map[string]any{"name": name, "type": typ, "stream": stream, "toxicity": 1.0, "attributes": attrs})
	if err != nil {
		return err
	}
	if _, err := l.p.Toxics.AddToxicJson(bytes.NewReader(b)); err != nil {
		return fmt.Errorf("toxic %s (%s) on %s: %w", name, typ, l.p.Name, err)
	}
	return nil
}

// Heal removes every toxic from the link.
func (l *Link) Heal() { l.p.Toxics.ResetToxics(context.Background()) }

// Down stops the link: new connections are refused and open ones close.
func (l *Link) Down() { l.p.Stop() }

// Up starts a stopped link again on the same address.
func (l *Link) Up() error { return l.p.Start() }

// Close stops every link. Close may be called more than once.
func (t *Toxi) Close() {
	t.once.Do(func() {
		// Remove the toxics while the links still carry data: an interrupted
		// toxic holding a packet waits up to 5 s for a reader before it gives
		// up (toxiproxy does not drop accepted data), which a closed link
		// would turn into a goroutine lingering past teardown.
		for _, p := range t.srv.Collection.Proxies() {
			p.Toxics.ResetToxics(context.Background())
		}
		_ = t.srv.Collection.Clear()
	})
}
