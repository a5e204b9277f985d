package harness

import (
	"context"
	"errors"
	"fmt"
)

// Replicated is a target made of several proxy processes behind one address
// (a Cluster): ReplicaURLs are the base URLs of those running now, in order.
type Replicated interface {
	ReplicaURLs() []string
}

var _ Replicated = (*Cluster)(nil)

// ReplicaURLs implements Replicated: the base URL of each replica running
// now (a killed one, until started again, has nothing to answer; none
// before Start or after Stop).
func (c *Cluster) ReplicaURLs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, r := range c.replicas {
		if r.PID() != 0 {
			out = append(out, r.URL())
		}
	}
	return out
}

// GetJSONFromEach is GetJSON for a read whose answer depends on the
// answering process's own state first: on a Replicated target it asks every
// replica in turn, directly, and keeps the last answer, which is given after
// every replica has answered once. mcplocal's audit API flushes the
// answering replica's queue of rows before it reads the shared store, so
// the last answer holds the rows every replica wrote, wherever a request
// went. On any other target it is GetJSON.
func (e *Env) GetJSONFromEach(ctx context.Context, path string, v any, apiErr *string) error {
	r, ok := e.Target.(Replicated)
	if !ok {
		return e.GetJSON(ctx, path, v, apiErr)
	}
	urls := r.ReplicaURLs()
	if len(urls) == 0 {
		return errors.New(e.Target.Name() + ": no replica is running")
	}
	for _, u := range urls {
		if err := e.getJSONFrom(ctx, u, path, v, apiErr); err != nil {
			return err
		}
	}
	return nil
}

// OneProcess says why t cannot run a scenario about what one proxy process
// does on its own: a bound it holds on its client connections (open
// connections, idle keep-alives, header sizes, session caps), which a load
// balancer in front holds first, or its own stop, which a cluster's restart
// spreads over its replicas in turn. "" for a target of one process.
func OneProcess(t Target) string {
	if _, ok := t.(Replicated); !ok {
		return ""
	}
	return fmt.Sprintf("target %s is several processes behind HAProxy, which holds the clients' connections and spreads their sessions: what one process does on its own (its connection and session bounds, its stop) is held on one replica (target binary)", t.Name())
}
