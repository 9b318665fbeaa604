package ofswitch

import (
	"net"
	"sync/atomic"
	"testing"
	"time"
)

func TestHeldControllersAreNotConnectedUntilReleased(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var accepted atomic.Int64
	conns := make(chan net.Conn, 16)
	defer func() {
		l.Close()
		for len(conns) > 0 {
			(<-conns).Close()
		}
	}()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			select {
			case conns <- c:
			default:
				c.Close()
			}
		}
	}()
	b, err := New(Config{Name: "br0"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	active, passive := "tcp:"+l.Addr().String(), "ptcp:0:127.0.0.1"
	b.Upcalls().SetFlowRestoreWait(true)
	b.SetConfig(Settings{FailMode: "secure", Controllers: []string{active, passive}, HoldControllers: true})
	if !b.Upcalls().FlowRestoreWait() {
		t.Fatal("FlowRestoreWait() = false after SetFlowRestoreWait(true)")
	}
	time.Sleep(300 * time.Millisecond)
	if n := accepted.Load(); n != 0 {
		t.Fatalf("%d connections to a held controller, want 0", n)
	}
	cs, ok := b.ControllerStatus(active)
	if !ok || cs.IsConnected || cs.Role != "" || len(cs.Status) != 0 {
		t.Fatalf("held active controller status = %+v, %v; want not connected, no role, empty status", cs, ok)
	}
	if _, ok := b.ControllerStatus(passive); ok {
		t.Fatal("a passive target reported a status")
	}
	b.Upcalls().SetFlowRestoreWait(false)
	b.SetConfig(Settings{FailMode: "secure", Controllers: []string{active, passive}})
	deadline := time.Now().Add(5 * time.Second)
	for accepted.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no connection to the controller once released")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
