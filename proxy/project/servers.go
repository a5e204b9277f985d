package project

import (
	"net/http"
	"reflect"
	"slices"
)

// serverNames are the project's server names, sorted: a snapshot, since an
// operator may add or remove servers while requests run (PutServer).
func (p *Project) serverNames() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.names
}

// Servers returns the project's servers, name -> MCP URL.
func (p *Project) Servers() map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]string, len(p.servers))
	for n, u := range p.servers {
		out[n] = u
	}
	return out
}

// PutServer adds server name at url, or replaces it, while the project
// serves. A replaced server's upstream sessions are closed (each client
// reconnects to the new URL on its next use), and every client session of
// the project is sent tools, prompts and resources list_changed, so it lists
// again and sees the new tools. Headers are the server's credentials from
// now on: the ones given, none when nil, never the replaced server's.
// Putting a server unchanged does nothing.
func (p *Project) PutServer(name, url string, headers http.Header) {
	p.mu.Lock()
	old, had := p.servers[name]
	if had && old == url && reflect.DeepEqual(p.headers[name], headers) {
		p.mu.Unlock()
		return
	}
	p.servers[name] = url
	if len(headers) == 0 {
		delete(p.headers, name)
	} else {
		p.headers[name] = headers.Clone()
	}
	if !had {
		names := append(slices.Clone(p.names), name) // readers hold the old slice
		slices.Sort(names)
		p.names = names
	}
	p.mu.Unlock()
	p.changed(name, had)
}

// RemoveServer removes server name while the project serves: its upstream
// sessions are closed and every client session is sent list_changed. It
// reports whether the project had that server.
func (p *Project) RemoveServer(name string) bool {
	p.mu.Lock()
	if _, had := p.servers[name]; !had {
		p.mu.Unlock()
		return false
	}
	delete(p.servers, name)
	p.names = slices.DeleteFunc(slices.Clone(p.names), func(n string) bool { return n == name })
	p.mu.Unlock()
	p.changed(name, true)
	return true
}

// changed closes every client's upstream session to server (when it
// existed before) and tells every client its lists changed.
func (p *Project) changed(server string, existed bool) {
	p.mu.Lock()
	delete(p.caps, server)
	clients := make([]*client, 0, len(p.clients))
	for _, c := range p.clients {
		clients = append(clients, c)
	}
	p.mu.Unlock()
	for _, c := range clients {
		if existed {
			c.drop(server)
		}
		c.listChanged("tools")
		c.listChanged("prompts")
		c.listChanged("resources")
	}
}

// drop closes the client's upstream session to server, in the background
// (bounded by the shutdown grace), and forgets the names it routed there.
func (c *client) drop(server string) {
	c.mu.Lock()
	conn := c.conns[server]
	delete(c.conns, server)
	for k, s := range c.uris {
		if s == server {
			delete(c.uris, k)
		}
	}
	for k, s := range c.templates {
		if s == server {
			delete(c.templates, k)
		}
	}
	c.mu.Unlock()
	if conn == nil {
		return
	}
	c.p.closing.Add(1)
	go func() {
		defer c.p.closing.Done()
		_ = conn.Close()
	}()
}
