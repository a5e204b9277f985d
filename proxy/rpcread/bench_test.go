package rpcread

import "testing"

// aCall is a tools/call body as the bench's clients send it.
var aCall = []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"up_update_page","arguments":{"page_id":"p1","content":"bench"},"_meta":{"progressToken":7}}}`)

// BenchmarkReadACall is the entry's reading of one call: what every
// tools/call pays before it is served.
//
//	go test -run '^$' -bench BenchmarkReadACall -benchmem ./proxy/rpcread
func BenchmarkReadACall(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if r := Read(aCall); r.Err != nil || len(r.Messages) != 1 {
			b.Fatal(r.Err)
		}
	}
}

// Reading a call allocates what the call needs, not a decoder's buffer: the
// reading's own decodes parse the body in place (the SDK's envelope decode,
// which the reading must equal, is the rest).
func TestReadingACallAllocatesNoDecoderBuffer(t *testing.T) {
	var bytes int64
	r := testing.Benchmark(BenchmarkReadACall)
	if r.N > 0 {
		bytes = r.AllocedBytesPerOp()
	}
	// The SDK's envelope decode takes two 32 KiB buffers of its own; a
	// third, the reading's, would put a call past 96 KiB.
	if bytes == 0 || bytes >= 3*32<<10 {
		t.Fatalf("reading one call allocates %d bytes: a decoder's 32 KiB buffer is back", bytes)
	}
}
