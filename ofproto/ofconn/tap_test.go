package ofconn

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gvs-project/gvs/ofproto/ofp"
)

// TestTapSeesBothDirectionsUntilRemoved checks SetTap: the server's tap
// sees the echo request it receives, the echo reply ofconn answers with,
// and a request and its reply, in order; after SetTap(nil) nothing more.
func TestTapSeesBothDirectionsUntilRemoved(t *testing.T) {
	srv := &Server{Handler: HandlerFunc(func(s Sender, m *ofp.Msg) {
		if m.Raw == ofp.RawOFPT11_BARRIER_REQUEST {
			s.Reply(m, &ofp.BarrierReply{})
		}
	}), Config: Config{Versions: []uint8{4}}}
	sock := filepath.Join(t.TempDir(), "s.sock")
	if _, err := srv.Listen("punix:" + sock); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	replies := make(chan *ofp.Msg, 8)
	cl, err := Dial(context.Background(), "unix:"+sock, Config{Versions: []uint8{4}},
		HandlerFunc(func(_ Sender, m *ofp.Msg) { replies <- m }))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var sc *Conn
	for deadline := time.Now().Add(5 * time.Second); sc == nil && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cs := srv.Conns(); len(cs) == 1 {
			sc = cs[0]
		}
	}
	if sc == nil {
		t.Fatal("no server connection")
	}
	var mu sync.Mutex
	var seen []string
	sc.SetTap(func(b []byte) {
		m, err := ofp.Decode(append([]byte(nil), b...))
		if err != nil {
			t.Errorf("tap got undecodable %x", b)
			return
		}
		mu.Lock()
		seen = append(seen, m.Raw.String())
		mu.Unlock()
	})
	exchange := func(xid uint32, req ofp.Message) {
		t.Helper()
		if err := cl.Send(xid, req); err != nil {
			t.Fatal(err)
		}
		select {
		case <-replies:
		case <-time.After(5 * time.Second):
			t.Fatalf("no reply to %T", req)
		}
	}
	exchange(1, &ofp.EchoRequest{})
	exchange(2, &ofp.BarrierRequest{})
	sc.SetTap(nil)
	exchange(3, &ofp.BarrierRequest{})
	mu.Lock()
	defer mu.Unlock()
	want := []string{"OFPT_ECHO_REQUEST", "OFPT_ECHO_REPLY", "OFPT11_BARRIER_REQUEST", "OFPT11_BARRIER_REPLY"}
	if len(seen) != len(want) {
		t.Fatalf("tap saw %v, want %v", seen, want)
	}
	for i := range want {
		if seen[i] != want[i] {
			t.Fatalf("tap saw %v, want %v", seen, want)
		}
	}
}
