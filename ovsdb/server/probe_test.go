package server

import (
	"encoding/json"
	"io"
	"net"
	"testing"
	"time"
)

// probedPeer serves one end of a pipe with a probe interval and returns
// the client's end with a JSON decoder.
func probedPeer(t *testing.T, interval time.Duration) (net.Conn, *json.Decoder) {
	t.Helper()
	s := New()
	a, b := net.Pipe()
	s.ServeConnProbed(a, interval)
	t.Cleanup(func() { b.Close(); s.Close() })
	return b, json.NewDecoder(b)
}

type rpcMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
}

func TestSilentClientIsProbedThenDropped(t *testing.T) {
	const interval = 50 * time.Millisecond
	c, dec := probedPeer(t, interval)
	start := time.Now()
	c.SetReadDeadline(start.Add(5 * time.Second))
	var m rpcMsg
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	if m.Method != "echo" || string(m.ID) != `"echo"` {
		t.Fatalf("first message %+v, want an echo request", m)
	}
	if err := dec.Decode(&m); err != io.EOF && err != io.ErrClosedPipe {
		t.Fatalf("after an unanswered probe: %v, want the connection closed", err)
	}
	if d := time.Since(start); d < 2*interval {
		t.Errorf("dropped after %v, before two intervals", d)
	}
}

func TestClientAnsweringProbesStays(t *testing.T) {
	const interval = 30 * time.Millisecond
	c, dec := probedPeer(t, interval)
	c.SetDeadline(time.Now().Add(5 * time.Second))
	for range 4 {
		var m rpcMsg
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		if m.Method != "echo" {
			t.Fatalf("got %+v, want an echo request", m)
		}
		if _, err := io.WriteString(c, `{"id":"echo","result":[],"error":null}`); err != nil {
			t.Fatal(err)
		}
	}
	io.WriteString(c, `{"id":5,"method":"list_dbs","params":[]}`)
	for {
		var m rpcMsg
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("session ended although the client answered every probe: %v", err)
		}
		if string(m.ID) == "5" {
			if string(m.Result) != `["_Server"]` {
				t.Errorf("list_dbs: %s", m.Result)
			}
			return
		}
	}
}

func TestZeroProbeIntervalNeverProbes(t *testing.T) {
	c, dec := probedPeer(t, 0)
	c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	var m rpcMsg
	if err := dec.Decode(&m); err == nil {
		t.Errorf("unexpected message %+v", m)
	}
}
