package backer

import (
	"context"
	"log/slog"
	"sync"
	"testing"

	"github.com/gvs-project/gvs/ovsdb/bridge"
)

// newTestBFDMonitor is a monitor over its own bridge map, without a
// backer.
func newTestBFDMonitor(t *testing.T) *bfdMonitor {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	m := newBFDMonitor()
	m.mu, m.bridges = &sync.Mutex{}, map[string]*dpBridge{}
	m.republish = func(*dpBridge) {}
	m.logger = func(string) *slog.Logger { return slog.New(slog.DiscardHandler) }
	m.count = func(string) {}
	m.ctx, m.wg = ctx, &wg
	t.Cleanup(func() { cancel(); wg.Wait() })
	return m
}

func bfdPortConfig(name string, bfdCfg map[string]string) []bridge.PortConfig {
	return []bridge.PortConfig{{Name: name, Interfaces: []bridge.IfaceConfig{{Name: name, BFD: bfdCfg}}}}
}

// TestBFDMonitorKeepsTheSessionOfAReaddedInterface checks the session
// life cycle: enabling BFD opens a session (the port is not live until
// it comes up), a deleted interface's session is parked and taken back
// when the interface is added again, and ended (its status written)
// when it is not.
func TestBFDMonitorKeepsTheSessionOfAReaddedInterface(t *testing.T) {
	m := newTestBFDMonitor(t)
	on := map[string]string{"enable": "true"}
	p := &dpPort{name: "p1", typ: "dummy", ofport: 1, bfdNoFwd: true}
	b := &dpBridge{name: "br0", ports: map[string]*dpPort{"p1": p}}
	m.bridges["br0"] = b
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.configureLocked(b, bfdPortConfig("p1", on)) || p.bfd == nil || !p.bfdNoFwd {
		t.Fatalf("enabling BFD: session %v, not forwarding %v", p.bfd, p.bfdNoFwd)
	}
	<-m.status
	if m.configureLocked(b, bfdPortConfig("p1", map[string]string{"enable": "true"})) {
		t.Fatal("an unchanged bfd column changed the session")
	}
	sess := p.bfd
	m.closeLocked(p)
	delete(b.ports, "p1")
	if noFwd, ok := m.parkedNoFwd("p1"); !ok || !noFwd {
		t.Fatalf("parked: %v %v", noFwd, ok)
	}
	again := &dpPort{name: "p1", typ: "dummy", ofport: 1}
	b.ports["p1"] = again
	if !m.configureLocked(b, bfdPortConfig("p1", on)) || again.bfd != sess {
		t.Fatal("the re-added interface did not get its session back")
	}
	m.closeLocked(again)
	delete(b.ports, "p1")
	select {
	case <-m.status:
	default:
	}
	m.reapLocked()
	if _, ok := m.parkedNoFwd("p1"); ok {
		t.Fatal("the session of an interface no bridge has stayed parked")
	}
	select {
	case <-m.status:
	default:
		t.Fatal("ending a session did not ask for bfd_status to be written")
	}
	if len(m.reg.Sessions()) != 0 {
		t.Fatalf("sessions left: %d", len(m.reg.Sessions()))
	}
}
