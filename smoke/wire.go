package smoke

// The wire contract smoke checks, written down here rather than imported
// from the proxy: smoke judges a deployed proxy by the generic promises (docs/design.md), so
// a change to the proxy's own constants must not silently change what smoke
// accepts. A test in scenarios/harness keeps the two in step.

// TraceMetaKey is the key under which a result's _meta carries its trace code.
const TraceMetaKey = "traceCode"

// traceAlphabet is Crockford base32 without I, L, O and U.
const traceAlphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// ValidTraceCode reports whether s is a trace code: 8 characters of
// Crockford base32 (digits and upper-case letters without I, L, O, U).
func ValidTraceCode(s string) bool {
	if len(s) != 8 {
		return false
	}
	for i := 0; i < len(s); i++ {
		ok := false
		for j := 0; j < len(traceAlphabet); j++ {
			if s[i] == traceAlphabet[j] {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}
