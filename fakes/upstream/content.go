package upstream

import (
	"fmt"
	"hash/fnv"
	"strings"
)

// SearchSections is how many pages (sections) a docmost search returns.
const SearchSections = 20

var words = strings.Fields(`deploy cluster ingress certificate backup restore
node volume secret rotate upgrade rollback network policy gateway dns zone
record monitor alert dashboard runbook incident latency budget quota tenant
project session token proxy upstream pipeline stage summary index`)

// SearchText is the docmost search result for query: SearchSections pages,
// each a "## " heading and a paragraph, about 14 kB in all. It is deterministic
// in query, so tests can compare results across runs.
func SearchText(query string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(query))
	seed := h.Sum64()
	next := func() uint64 { // xorshift: deterministic, no shared state
		seed ^= seed << 13
		seed ^= seed >> 7
		seed ^= seed << 17
		return seed
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Search results for %q\n\n", query)
	for i := 1; i <= SearchSections; i++ {
		fmt.Fprintf(&b, "## Page %d: %s %s notes\n\n", i, words[next()%uint64(len(words))], words[next()%uint64(len(words))])
		for n := 0; b.Len() < i*700; n++ {
			if n > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[next()%uint64(len(words))])
			if n%12 == 11 {
				b.WriteByte('.')
			}
		}
		b.WriteString(".\n\n")
	}
	return b.String()
}
