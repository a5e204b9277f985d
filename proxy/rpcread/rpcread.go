// Package rpcread is the one reading of a JSON-RPC request body that every
// decision about the request is made from: is it a batch, which messages,
// their methods, ids (as sent, byte for byte) and params.
//
// The reading is the go-sdk's own: each message is decoded by the SDK's
// jsonrpc.DecodeMessage, and the batch split, the ids and the params by the
// same case-sensitive decoder the SDK uses (segmentio/encoding with
// DontMatchCaseInsensitiveStructFields). encoding/json matches keys without
// regard to case, so `"METHOD":"x"` beside `"method":"initialize"` reads "x"
// there and "initialize" in the SDK: a decision made from encoding/json is
// a decision about another request than the one the SDK serves.
package rpcread

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sjson "github.com/segmentio/encoding/json"
)

// MaxDepth is the nesting the SDK's decoder accepts (internal/json of
// go-sdk v1.8.0); deeper bodies are malformed to both readings.
const MaxDepth = 1000

// Message is one JSON-RPC message of a body.
type Message struct {
	// Request is set when the message has a method key (a request or a
	// notification); otherwise it is a response.
	Request bool
	Method  string
	// ID is the id as the client sent it (raw JSON); nil when absent.
	ID json.RawMessage
	// Params are the params as sent; nil when absent.
	Params json.RawMessage
	// SDKID is the id as the SDK reads it (a float becomes an int64).
	SDKID jsonrpc.ID
}

// Call reports whether m is a request that expects an answer.
func (m Message) Call() bool { return m.Request && m.SDKID.IsValid() }

// Reading is what a body says.
type Reading struct {
	// Batch is set when the body is a JSON array of messages.
	Batch bool
	// Len is how many messages the body holds.
	Len      int
	Messages []Message
	// Err is set when the SDK would refuse the body as malformed; the
	// messages read so far are kept.
	Err error
}

// ErrEmptyBatch is the reading of `[]`.
var ErrEmptyBatch = errors.New("empty batch")

// ErrBatchTooLarge is the reading of a batch of more messages than the
// reader reads (ReadAtMost): its messages are not read.
var ErrBatchTooLarge = errors.New("batch too large")

// Read reads body once, as the go-sdk's Streamable HTTP transport does: an
// array of messages first, one message otherwise.
func Read(body []byte) Reading { return ReadAtMost(body, 0) }

// ReadAtMost is Read, except that a batch of more than max messages (max >
// 0) is not read message by message: its reading says only its Len, with
// ErrBatchTooLarge. Reading each message costs the SDK's decoder, and a
// batch the proxy refuses for its size must not cost that many times over.
func ReadAtMost(body []byte, max int) Reading {
	var raws []json.RawMessage
	if decode(body, &raws) == nil {
		r := Reading{Batch: true, Len: len(raws)}
		if len(raws) == 0 {
			r.Err = ErrEmptyBatch
			return r
		}
		if max > 0 && len(raws) > max {
			r.Err = ErrBatchTooLarge
			return r
		}
		for _, raw := range raws {
			m, err := readOne(raw)
			if err != nil {
				r.Err = err
				return r
			}
			r.Messages = append(r.Messages, m)
		}
		return r
	}
	m, err := readOne(body)
	if err != nil {
		return Reading{Len: 1, Err: err}
	}
	return Reading{Len: 1, Messages: []Message{m}}
}

// Single returns the one message of a body that is not a batch.
func (r Reading) Single() (Message, bool) {
	if r.Batch || r.Err != nil || len(r.Messages) != 1 {
		return Message{}, false
	}
	return r.Messages[0], true
}

// IsInitialize reports whether the body is one initialize request.
func (r Reading) IsInitialize() bool {
	m, ok := r.Single()
	return ok && m.Request && m.Method == "initialize"
}

// HasMethod reports whether any message of the body is a request for method.
func (r Reading) HasMethod(method string) bool {
	for _, m := range r.Messages {
		if m.Request && m.Method == method {
			return true
		}
	}
	return false
}

func readOne(raw []byte) (Message, error) {
	msg, err := jsonrpc.DecodeMessage(raw)
	if err != nil {
		return Message{}, err
	}
	var w struct {
		ID     json.RawMessage `json:"id"`
		Params json.RawMessage `json:"params"`
	}
	if err := decode(raw, &w); err != nil {
		return Message{}, fmt.Errorf("reading the id: %w", err)
	}
	m := Message{ID: w.ID}
	switch msg := msg.(type) {
	case *jsonrpc.Request:
		m.Request, m.Method, m.SDKID, m.Params = true, msg.Method, msg.ID, w.Params
	case *jsonrpc.Response:
		m.SDKID = msg.ID
	}
	if m.SDKID.IsValid() && len(m.ID) == 0 {
		return Message{}, errors.New("an id the SDK reads is missing from the strict reading")
	}
	return m, nil
}

// decode is the SDK's decoding: depth-checked, case-sensitive keys, the
// first JSON value of data. It parses data in place, as the SDK's decoder
// parses the value it has read: a decoder over a reader would allocate and
// clear a 32 KiB buffer for every message, several per call.
func decode(data []byte, v any) error {
	if err := checkDepth(data); err != nil {
		return err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return io.EOF // what the SDK's decoder says of no value at all
	}
	_, err := sjson.Parse(data, v, sjson.DontMatchCaseInsensitiveStructFields)
	return err
}

var errTooDeep = fmt.Errorf("json: nesting deeper than %d", MaxDepth)

// checkDepth refuses data whose objects and arrays nest deeper than MaxDepth,
// counting brackets outside strings.
func checkDepth(data []byte) error {
	depth, inString, escaped := 0, false, false
	for _, c := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			if depth++; depth > MaxDepth {
				return errTooDeep
			}
		case '}', ']':
			depth--
		}
	}
	return nil
}

// Decode decodes data as the SDK does (case-sensitive keys, depth-checked):
// for the parts of a message the entry reads beyond the envelope (a call's
// name, an initialize's params).
func Decode(data []byte, v any) error { return decode(data, v) }
