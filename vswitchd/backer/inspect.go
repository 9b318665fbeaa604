package backer

import (
	"fmt"
	"strings"

	"github.com/gvs-project/gvs/datapath/l2fib"
	"github.com/gvs-project/gvs/datapath/netdev"
	"github.com/gvs-project/gvs/ofproto/upcall"
)

// What the appctl commands and the metrics exporter read of the backer.

// PortSample is one port's identity and counters at scrape time.
type PortSample struct {
	Bridge, Port string
	OFPort       int64
	Stats        netdev.Stats
}

// PortSamples returns every bridge port that has a device (patch ports
// have none), in bridge and port name order.
func (s *Backer) PortSamples() []PortSample {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []PortSample
	for _, bn := range sortedKeys(s.bridges) {
		b := s.bridges[bn]
		for _, pn := range sortedKeys(b.ports) {
			p := b.ports[pn]
			if p.dev == nil {
				continue
			}
			out = append(out, PortSample{Bridge: bn, Port: pn, OFPort: p.ofport, Stats: p.dev.Stats()})
		}
	}
	return out
}

// MACSample is one bridge's MAC learning table.
type MACSample struct {
	Bridge string
	Table  *l2fib.Table
}

// MACTables returns every bridge's MAC learning table.
func (s *Backer) MACTables() []MACSample {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []MACSample
	for _, bn := range sortedKeys(s.bridges) {
		if t := s.bridges[bn].fdb; t != nil {
			out = append(out, MACSample{Bridge: bn, Table: t})
		}
	}
	return out
}

// sharedFlowLimitLocked returns the dynamic flow limit of the bridges of
// datapath type typ, nil if it has none. Called with s.mu held.
func (s *Backer) sharedFlowLimitLocked(typ string) *upcall.FlowLimit {
	for _, br := range s.bridges {
		if br.dpTyp == typ && br.of != nil {
			return br.of.Upcalls().FlowLimit()
		}
	}
	return nil
}

// flowLimitLocked returns the dynamic flow limit a new bridge of datapath
// type typ shares with the others (a new one for the first, bounded by
// the datapath's other_config:flow-limit). Called with s.mu held.
func (s *Backer) flowLimitLocked(typ string) *upcall.FlowLimit {
	if fl := s.sharedFlowLimitLocked(typ); fl != nil {
		return fl
	}
	return upcall.NewFlowLimit(s.Datapath(typ).ConfiguredFlowLimit())
}

// SharedFlowLimit returns the dynamic flow limit of the bridges of
// datapath type typ, nil if it has none.
func (s *Backer) SharedFlowLimit(typ string) *upcall.FlowLimit {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sharedFlowLimitLocked(typ)
}

// DumpDps lists the bridges as TYPE@NAME lines (dpif/dump-dps).
func (s *Backer) DumpDps() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var sb strings.Builder
	for _, n := range sortedKeys(s.bridges) {
		fmt.Fprintf(&sb, "%s@%s\n", s.bridges[n].dpTyp, n)
	}
	return sb.String()
}

// SyncAllPorts gives every bridge's OpenFlow switch its ports again, after
// devices changed state behind the backer (netdev-dummy/set-admin-state).
func (s *Backer) SyncAllPorts() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range sortedKeys(s.bridges) {
		s.syncPorts(s.bridges[n])
	}
}
