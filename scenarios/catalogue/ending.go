package catalogue

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Ending is how a request ended, as the client saw it on the wire. The
// verdict tells them apart: silence is not an error, a JSON-RPC error is an
// answer, and an HTTP-level failure is neither.
type Ending string

const (
	// EndNoAnswer: the client's own limit ran out before any answer came.
	EndNoAnswer Ending = "no answer"
	// EndHTTP: no MCP answer: a refused or broken connection, a cut body, an
	// HTTP status instead of a JSON-RPC message.
	EndHTTP Ending = "HTTP-level failure"
	// EndRPCError: a JSON-RPC error object, the proxy's own or relayed.
	EndRPCError Ending = "JSON-RPC error"
	// EndIsError: a tools/call result with isError: true.
	EndIsError Ending = "isError result"
	// EndResult: a normal result.
	EndResult Ending = "result"
)

// EndingOf classifies how o's timed request ended.
func EndingOf(o Observation) Ending {
	var werr *jsonrpc.Error
	switch {
	case o.Err == nil && o.IsError:
		return EndIsError
	case o.Err == nil:
		return EndResult
	case errors.As(o.Err, &werr) && !rejectedByTransport(werr):
		return EndRPCError
	case errors.Is(o.Err, context.DeadlineExceeded), errors.Is(o.Err, context.Canceled):
		return EndNoAnswer
	}
	return EndHTTP
}

// rejectedByTransport says whether werr is the go-sdk client's own word for
// a request its transport could not deliver, or whose answer it could not
// read (a refused or reset connection, an HTTP status): a JSON-RPC error in
// Go (code -32005), but none the proxy sent.
func rejectedByTransport(werr *jsonrpc.Error) bool {
	return werr.Code == -32005 && werr.Message == "rejected by transport"
}

// unanswered is the one breach of a request that got no MCP answer (no
// answer at all, or an HTTP-level failure); nil for one that was answered,
// with a result or a JSON-RPC error.
func unanswered(o Observation) error {
	switch EndingOf(o) {
	case EndNoAnswer:
		return broke(PromiseAnswered, "never answered: the client gave up after %v", o.Latency.Round(time.Millisecond))
	case EndHTTP:
		return broke(PromiseAnswered, "no MCP answer, an HTTP-level failure: %v", o.Err)
	}
	return nil
}

// rpcText is a JSON-RPC error as a person reads it: "code -32603: message".
func rpcText(err error) string {
	var werr *jsonrpc.Error
	if errors.As(err, &werr) {
		return fmt.Sprintf("code %d: %s", werr.Code, excerpt(werr.Message))
	}
	return excerpt(fmt.Sprint(err))
}
