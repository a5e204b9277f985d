package harness

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// IngressHairpin puts an L7 proxy where the upstream should be: the seed's
// "ingress hairpin", where a co-located service reached over its public
// hostname went out and back through an Envoy policy that answered every call
// with a bare plain-text `Access denied` 403. The link's address is taken over
// by a tiny HTTP server that answers every request that way; the upstream
// itself stays up behind it, unreachable.
type IngressHairpin struct {
	Link string `json:"link"`
}

var _ Fault = IngressHairpin{}

// HairpinBody is what the hairpin answers, as text/plain with status 403.
const HairpinBody = "Access denied"

func (IngressHairpin) Name() string { return "ingress-hairpin" }
func (f IngressHairpin) Params() string {
	return fmt.Sprintf("link=%s answers 403 text/plain %q", link(f.Link), HairpinBody)
}

// Inject stops the link and serves the hairpin on its address until the env
// closes.
func (f IngressHairpin) Inject(_ context.Context, e *Env) error {
	l, err := e.link(f.Link)
	if err != nil {
		return err
	}
	addr := l.Addr()
	l.Down()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("hairpin on %s: %w", addr, err)
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(HairpinBody))
		}),
		ReadHeaderTimeout: time.Second,
	}
	go func() { _ = srv.Serve(ln) }()
	e.closers = append(e.closers, func() error {
		// The listener is closed here too: Serve may not have taken it yet,
		// and a server closed first leaves it open until Serve gets to it,
		// while the link wants its address back now.
		var errs []error
		for _, err := range []error{srv.Close(), ln.Close()} {
			if err != nil && !errors.Is(err, net.ErrClosed) {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	})
	return nil
}
