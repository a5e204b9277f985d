package entry

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"strconv"

	"github.com/mcpchaos/mcpchaos/proxy/rpcread"
)

// The go-sdk reads a JSON-RPC id into a float64 and answers with its int64
// (123456789012345678901234567890 comes back as -9223372036854775808, 1.5 as
// 1, 1e3 as 1000) and re-encodes string ids ("\u0041b" comes back as "Ab").
// JSON-RPC ids round-trip byte for byte: a request whose id the SDK would
// not give back as sent is served under a stand-in id the SDK keeps exactly,
// and the stand-in is replaced by the client's own id in the answer.

// sdkKeeps reports whether the SDK answers id with the very bytes it got.
func sdkKeeps(id json.RawMessage) bool {
	if len(id) == 0 || string(id) == "null" {
		return true
	}
	if id[0] == '"' {
		var s string
		if json.Unmarshal(id, &s) != nil {
			return false
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		return enc.Encode(s) == nil && bytes.Equal(bytes.TrimSuffix(b.Bytes(), []byte("\n")), id)
	}
	n, err := strconv.ParseInt(string(id), 10, 64)
	return err == nil && strconv.FormatInt(n, 10) == string(id) && n > -(1<<53) && n < 1<<53 // exact as a float64
}

// exactIDs rewrites a single request whose id the SDK would not keep: it
// returns the body with a stand-in id and a writer that puts the client's
// id back in the answer. Anything else is returned as it is.
func exactIDs(w http.ResponseWriter, body []byte, rd rpcread.Reading) (http.ResponseWriter, []byte) {
	m, ok := rd.Single()
	if !ok || !m.Call() || sdkKeeps(m.ID) {
		return w, body
	}
	var fields map[string]json.RawMessage
	if rpcread.Decode(body, &fields) != nil {
		return w, body
	}
	stand := standIn()
	fields["id"] = stand
	out, err := json.Marshal(fields)
	if err != nil {
		return w, body
	}
	return &idWriter{ResponseWriter: w, from: stand, to: m.ID}, out
}

// serveExact serves r through sdk with exactIDs applied to body.
func serveExact(sdk http.Handler, w http.ResponseWriter, r *http.Request, body []byte, rd rpcread.Reading) {
	xw, xbody := exactIDs(w, body, rd)
	iw, ok := xw.(*idWriter)
	if !ok {
		sdk.ServeHTTP(w, r)
		return
	}
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(xbody)), int64(len(xbody))
	sdk.ServeHTTP(iw, r)
	iw.release()
}

// standIn is an id no client sends: a string of 128 random bits.
func standIn() json.RawMessage {
	return json.RawMessage(strconv.Quote("mcplocal-id-" + rand.Text()))
}

// idWriter replaces every occurrence of from (the stand-in id, quotes
// included) by to (the client's id) in what it writes. A stand-in cut
// across two writes is held until the next write or flush.
type idWriter struct {
	http.ResponseWriter
	from, to []byte
	held     []byte
	wrote    bool
}

func (i *idWriter) WriteHeader(status int) {
	if !i.wrote {
		i.wrote = true
		i.Header().Del("Content-Length") // the client's id may be longer
	}
	i.ResponseWriter.WriteHeader(status)
}

func (i *idWriter) Write(b []byte) (int, error) {
	if !i.wrote {
		i.WriteHeader(http.StatusOK)
	}
	data := bytes.ReplaceAll(append(i.held, b...), i.from, i.to)
	keep := 0
	for k := min(len(i.from)-1, len(data)); k > 0; k-- {
		if bytes.HasSuffix(data, i.from[:k]) {
			keep = k
			break
		}
	}
	i.held = append([]byte(nil), data[len(data)-keep:]...)
	if _, err := i.ResponseWriter.Write(data[:len(data)-keep]); err != nil {
		return 0, err
	}
	return len(b), nil
}

// Flush writes what is held: an event is whole when the SDK flushes it.
func (i *idWriter) Flush() {
	i.release()
	if f, ok := i.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (i *idWriter) release() {
	if len(i.held) > 0 {
		_, _ = i.ResponseWriter.Write(i.held)
		i.held = nil
	}
}

func (i *idWriter) Unwrap() http.ResponseWriter { return i.ResponseWriter }
