package stage

import (
	"crypto/rand"
	"encoding/base32"
	"sync"
)

// PagedDocuments bounds how many paginated results the proxy keeps for
// get_page: an agent reads a result's pages soon after the first one.
const PagedDocuments = 512

// Pages keeps paginated results so the other pages can be fetched through
// the proxy's get_page tool. Oldest documents are evicted first. Safe for
// concurrent use.
type Pages struct {
	mu    sync.Mutex
	docs  map[string][]string
	order []string
}

// NewPages returns an empty store.
func NewPages() *Pages { return &Pages{docs: map[string][]string{}} }

// Put stores pages and returns their handle.
func (p *Pages) Put(pages []string) string {
	var b [10]byte
	_, _ = rand.Read(b[:])
	h := base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:])
	p.mu.Lock()
	defer p.mu.Unlock()
	p.docs[h] = pages
	p.order = append(p.order, h)
	if len(p.order) > PagedDocuments {
		delete(p.docs, p.order[0])
		p.order = p.order[1:]
	}
	return h
}

// Get returns page n (1-based) of handle and how many pages it has.
func (p *Pages) Get(handle string, n int) (string, int, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pages, ok := p.docs[handle]
	if !ok || n < 1 || n > len(pages) {
		return "", len(pages), false
	}
	return pages[n-1], len(pages), true
}
