package audit

// Sink takes audit rows. Record must return at once and never fail the
// caller: a slow or broken store must not slow or break the request that
// wrote the row. The Recorder is the proxy's Sink; tests use small in-memory
// ones. Every package of the proxy that writes rows takes a Sink, so there
// is one contract to keep.
type Sink interface {
	Record(Row)
}

var _ Sink = (*Recorder)(nil)
