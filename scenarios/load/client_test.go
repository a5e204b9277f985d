package load

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func TestReadEventSkipsOtherMessagesAndFindsTheAnswer(t *testing.T) {
	stream := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n" +
		"id: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":7,\n" +
		"data: \"result\":{\"ok\":true}}\n\n"
	got, err := readEvent(strings.NewReader(stream), 7)
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\"jsonrpc\":\"2.0\",\"id\":7,\n\"result\":{\"ok\":true}}"; string(got) != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestReadEventReportsAStreamThatEndsWithoutTheAnswer(t *testing.T) {
	_, err := readEvent(strings.NewReader("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"), 2)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("err = %v, want unexpected EOF", err)
	}
}
