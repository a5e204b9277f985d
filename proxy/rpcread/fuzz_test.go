package rpcread

import (
	"bytes"
	"encoding/json"
	"testing"
	_ "unsafe" // go:linkname: the SDK's own batch reader is the reference

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	_ "github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkReadBatch is the go-sdk's reading of a Streamable HTTP POST body
// (mcp.readBatch, v1.8.0): the reference the entry's reading must equal.
// Pinned by this test: an SDK upgrade that renames it fails the build here.
//
//go:linkname sdkReadBatch github.com/modelcontextprotocol/go-sdk/mcp.readBatch
func sdkReadBatch(data []byte) (msgs []jsonrpc.Message, isBatch bool, _ error)

// readingSeeds are bodies whose readings differ between encoding/json and
// the SDK, and the shapes the entry decides on.
var readingSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
	`{"jsonrpc":"2.0","id":1,"method":"initialize","METHOD":"x","params":{}}`,
	`{"jsonrpc":"2.0","id":1,"METHOD":"initialize","method":"tools/call"}`,
	`{"jsonrpc":"2.0","ID":7,"id":1,"method":"tools/call","params":{"name":"a"}}`,
	`{"jsonrpc":"2.0","id":1,"ID":7,"method":"tools/call","PARAMS":{"name":"x"},"params":{"name":"a"}}`,
	`{"jsonrpc":"2.0","method":"initialize","Params":{"protocolVersion":"x"},"id":2}`,
	`[{"jsonrpc":"2.0","id":1,"method":"initialize"}]`,
	`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
	`[]`,
	`{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":"\u0041b","method":"ping"}`,
	`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1,"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping"} trailing`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","method":"initialize"}`,
	`{"jsonrpc":"1.0","id":1,"method":"ping"}`,
	`[[[[{"jsonrpc":"2.0"}]]]]`,
}

// FuzzReadingMatchesSDK holds the entry's reading of a body equal to the
// SDK's for the same bytes: batch or not, malformed or not, and for each
// message the same kind, method and id, the id as sent decoding to the SDK's.
func FuzzReadingMatchesSDK(f *testing.F) {
	for _, s := range readingSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got := Read(body)
		msgs, isBatch, err := sdkReadBatch(body)
		if (err != nil) != (got.Err != nil) {
			t.Fatalf("%q: SDK error %v, reading error %v", body, err, got.Err)
		}
		if isBatch != got.Batch {
			t.Fatalf("%q: SDK batch %v, reading batch %v", body, isBatch, got.Batch)
		}
		if err != nil {
			return
		}
		if len(msgs) != len(got.Messages) {
			t.Fatalf("%q: SDK reads %d messages, the reading %d", body, len(msgs), len(got.Messages))
		}
		for i, m := range msgs {
			g := got.Messages[i]
			var id jsonrpc.ID
			switch m := m.(type) {
			case *jsonrpc.Request:
				if !g.Request || g.Method != m.Method {
					t.Fatalf("%q #%d: SDK reads request %q, the reading %v %q", body, i, m.Method, g.Request, g.Method)
				}
				if !bytes.Equal(g.Params, m.Params) {
					t.Fatalf("%q #%d: SDK params %s, the reading's %s", body, i, m.Params, g.Params)
				}
				id = m.ID
			case *jsonrpc.Response:
				if g.Request {
					t.Fatalf("%q #%d: SDK reads a response, the reading a request", body, i)
				}
				id = m.ID
			}
			if g.SDKID != id {
				t.Fatalf("%q #%d: SDK id %v, the reading's %v", body, i, id, g.SDKID)
			}
			if !id.IsValid() {
				continue
			}
			// The id as sent, read as the SDK reads an id, is the SDK's id.
			var v any
			if json.Unmarshal(g.ID, &v) != nil {
				t.Fatalf("%q #%d: the id as sent %q is not JSON", body, i, g.ID)
			}
			if want, err := jsonrpc.MakeID(v); err != nil || want != id {
				t.Fatalf("%q #%d: the id as sent %s reads %v, the SDK's is %v", body, i, g.ID, want, id)
			}
		}
	})
}
