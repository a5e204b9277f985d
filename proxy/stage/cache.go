package stage

import (
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"sync"
)

// CacheEntries bounds the title and summary cache: a few KB each, so a few
// MB in all.
const CacheEntries = 4096

// Cache holds LLM-made titles and summaries by content. It is read before
// any budget check: a warm entry costs nothing, so it is served even when the
// budget is spent. Get and Set are separate (no get-or-compute) precisely so
// the budget check can sit between them. Safe for concurrent use.
type Cache struct {
	mu    sync.Mutex
	cap   int
	order *list.List // front: most recent
	items map[string]*list.Element
}

type cacheItem struct{ key, val string }

// NewCache returns an empty cache of at most n entries.
func NewCache(n int) *Cache {
	return &Cache{cap: n, order: list.New(), items: map[string]*list.Element{}}
}

// Key derives a cache key from a kind ("titles", "summary") and content.
func Key(kind, content string) string {
	sum := sha256.Sum256([]byte(content))
	return kind + ":" + hex.EncodeToString(sum[:16])
}

// Get returns the cached value for key.
func (c *Cache) Get(key string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[key]
	if !ok {
		return "", false
	}
	c.order.MoveToFront(e)
	return e.Value.(*cacheItem).val, true
}

// Set stores val under key, evicting the least recently used entry if full.
func (c *Cache) Set(key, val string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[key]; ok {
		e.Value.(*cacheItem).val = val
		c.order.MoveToFront(e)
		return
	}
	c.items[key] = c.order.PushFront(&cacheItem{key, val})
	if c.order.Len() > c.cap {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*cacheItem).key)
	}
}

// Len is the number of entries.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
