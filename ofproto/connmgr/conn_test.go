package connmgr

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gvs-project/gvs/ofproto/ofconn"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// ext stands for the switch's per-connection state.
type ext struct{ init bool }

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestServiceConnectionIsServedAndForgotten connects to <name>.mgmt: its
// messages reach Serve with a service (not primary) Conn whose switch
// state was initialized and which has no miss_send_len; closing it drops
// the Conn; OnChange runs for both.
func TestServiceConnectionIsServedAndForgotten(t *testing.T) {
	dir := t.TempDir()
	served := make(chan *Conn[ext], 4)
	var changes atomic.Int32
	m := New(Config[ext]{Name: "br0", RunDir: dir,
		Serve:    func(c *Conn[ext], msg *ofp.Msg) { served <- c },
		Init:     func(x *ext) { x.init = true },
		OnChange: func() { changes.Add(1) }})
	if err := m.Listen(); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	c, err := ofconn.Dial(context.Background(), "unix:"+filepath.Join(dir, "br0.mgmt"), ofconn.Config{Versions: []uint8{4}},
		ofconn.HandlerFunc(func(ofconn.Sender, *ofp.Msg) {}))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Send(1, &ofp.FeaturesRequest{}); err != nil {
		t.Fatal(err)
	}
	var got *Conn[ext]
	select {
	case got = <-served:
	case <-time.After(5 * time.Second):
		t.Fatal("the request was not served")
	}
	if got.Primary || !got.X.init || got.MissSendLen.Load() != 0 {
		t.Fatalf("service Conn: primary %v, initialized %v, miss_send_len %d; want false, true, 0",
			got.Primary, got.X.init, got.MissSendLen.Load())
	}
	n := 0
	m.Each(func(*Conn[ext]) { n++ })
	if n != 1 || changes.Load() != 1 {
		t.Fatalf("%d connections, %d changes; want 1 and 1", n, changes.Load())
	}
	c.Close()
	waitUntil(t, "the connection to be forgotten", func() bool {
		n := 0
		m.Each(func(*Conn[ext]) { n++ })
		return n == 0
	})
	if changes.Load() != 2 {
		t.Fatalf("%d changes after the close, want 2", changes.Load())
	}
}

// TestControllerConnectsGetsMissSendLenAndReportsStatus configures an
// active controller target: the manager connects, the Conn is primary
// with Open vSwitch's default miss_send_len before any message, the
// Controller status is ACTIVE; held, the target is not connected and
// reports no state; removed, it reports nothing.
func TestControllerConnectsGetsMissSendLenAndReportsStatus(t *testing.T) {
	dir := t.TempDir()
	m := New(Config[ext]{Name: "br0", Serve: func(*Conn[ext], *ofp.Msg) {}})
	defer m.Close()
	srv := &ofconn.Server{Handler: ofconn.HandlerFunc(func(ofconn.Sender, *ofp.Msg) {}), Config: ofconn.Config{Versions: []uint8{4}}}
	sock := filepath.Join(dir, "ctl.sock")
	if _, err := srv.Listen("punix:" + sock); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	target := "unix:" + sock
	m.SetControllers(Controllers{Targets: []string{target}})
	var conn *Conn[ext]
	waitUntil(t, "the controller connection", func() bool {
		m.Each(func(c *Conn[ext]) { conn = c })
		return conn != nil
	})
	if !conn.Primary || conn.MissSendLen.Load() != DefaultMissSendLen {
		t.Fatalf("controller Conn: primary %v, miss_send_len %d; want true, %d", conn.Primary, conn.MissSendLen.Load(), DefaultMissSendLen)
	}
	waitUntil(t, "ACTIVE status", func() bool {
		cs, ok := m.ControllerStatus(target)
		return ok && cs.IsConnected && cs.Status["state"] == "ACTIVE"
	})
	if m.ControllersDown(time.Now().Add(time.Hour), time.Minute) {
		t.Fatal("ControllersDown with a connected controller")
	}
	m.SetControllers(Controllers{Targets: []string{target}, Hold: true})
	cs, ok := m.ControllerStatus(target)
	if !ok || cs.IsConnected || len(cs.Status) != 0 {
		t.Fatalf("held controller status %+v, %v; want reported, not connected, empty", cs, ok)
	}
	m.SetControllers(Controllers{})
	if _, ok := m.ControllerStatus(target); ok {
		t.Fatal("a removed controller still reports a status")
	}
}
