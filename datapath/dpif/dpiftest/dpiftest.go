// Package dpiftest provides a fake dpif.Datapath for unit tests of the
// OpenFlow layer: it keeps megaflows in a map by UFID, records every put,
// delete and execute, and lets a test inject misses and userspace upcalls
// into the registered UpcallHandler and set the statistics a dump reports.
//
// It forwards no packets and matches nothing: a test says which packet
// misses and which megaflow saw how much traffic. It imports only
// datapath/{dpif,flow,odp,packet,netdev}; it must not import the datapath
// implementation (dpnetdev) or anything of ofproto.
package dpiftest

import (
	"fmt"
	"sort"
	"sync"

	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/netdev"
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/datapath/packet"
)

// Execute is one recorded execution: a packet-out, or the packet of an
// injected miss run with the handler's actions.
type Execute struct {
	Data    []byte
	Actions odp.Actions
}

// Datapath is a fake dpif.Datapath. The zero value is not usable: call
// New. All methods are safe for concurrent use.
type Datapath struct {
	name string

	mu        sync.Mutex
	handler   dpif.UpcallHandler
	ports     map[dpif.PortNo]dpif.PortInfo
	flows     map[dpif.UFID]*dpif.Flow
	order     []dpif.UFID // installation order, for dumps
	puts      []dpif.FlowPut
	dels      []dpif.UFID
	execs     []Execute
	stats     dpif.Stats
	flowLimit int
}

var _ dpif.Datapath = (*Datapath)(nil)

// New returns an empty fake datapath called name with a configured flow
// limit of dpif.DefaultConfig's.
func New(name string) *Datapath {
	return &Datapath{name: name, ports: map[dpif.PortNo]dpif.PortInfo{}, flows: map[dpif.UFID]*dpif.Flow{},
		flowLimit: dpif.DefaultConfig().FlowLimit}
}

// Name implements dpif.Datapath.
func (d *Datapath) Name() string { return d.name }

// AddPort implements dpif.Datapath: want, or the lowest free number above
// 0 if want is dpif.PortNone. dev may be nil.
func (d *Datapath) AddPort(dev netdev.Device, want dpif.PortNo) (dpif.PortNo, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	no := want
	if no == dpif.PortNone {
		for no = 1; ; no++ {
			if _, ok := d.ports[no]; !ok {
				break
			}
		}
	} else if _, ok := d.ports[no]; ok {
		return 0, fmt.Errorf("dpiftest: add port %d: %w", no, dpif.ErrPortInUse)
	}
	pi := dpif.PortInfo{No: no, Device: dev}
	if dev != nil {
		pi.Name, pi.Type = dev.Name(), dev.Type()
	}
	d.ports[no] = pi
	return no, nil
}

// DelPort implements dpif.Datapath.
func (d *Datapath) DelPort(no dpif.PortNo) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.ports[no]; !ok {
		return fmt.Errorf("dpiftest: del port %d: %w", no, dpif.ErrNoSuchPort)
	}
	delete(d.ports, no)
	return nil
}

// Port implements dpif.Datapath.
func (d *Datapath) Port(no dpif.PortNo) (dpif.PortInfo, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	pi, ok := d.ports[no]
	return pi, ok
}

// PortByName implements dpif.Datapath.
func (d *Datapath) PortByName(name string) (dpif.PortInfo, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, pi := range d.ports {
		if pi.Name == name {
			return pi, true
		}
	}
	return dpif.PortInfo{}, false
}

// Ports implements dpif.Datapath, sorted by number.
func (d *Datapath) Ports() []dpif.PortInfo {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]dpif.PortInfo, 0, len(d.ports))
	for _, pi := range d.ports {
		out = append(out, pi)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].No < out[j].No })
	return out
}

// FlowPut implements dpif.Datapath with dpnetdev's semantics: the mask
// always matches VLAN presence, the key is stored masked, a zero UFID is
// derived from the match. Every put is recorded (Puts), failed ones too.
func (d *Datapath) FlowPut(p *dpif.FlowPut) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.puts = append(d.puts, *p)
	return d.putLocked(p)
}

func (d *Datapath) putLocked(p *dpif.FlowPut) error {
	m := p.Match
	m.Mask.MatchVLANPresence()
	m.Normalize()
	u := p.UFID
	if u == (dpif.UFID{}) {
		u = dpif.UFIDFromMatch(&m)
	}
	if f, ok := d.flows[u]; ok {
		if p.Flags&dpif.PutModify == 0 {
			return fmt.Errorf("dpiftest: put %s: %w", u, dpif.ErrExists)
		}
		f.Actions = p.Actions
		if p.Flags&dpif.PutZeroStats != 0 {
			f.Stats = dpif.FlowStats{}
		}
		return nil
	}
	if p.Flags&dpif.PutCreate == 0 {
		return fmt.Errorf("dpiftest: modify %s: %w", u, dpif.ErrNotFound)
	}
	if len(d.flows) >= d.flowLimit {
		return fmt.Errorf("dpiftest: put %s: %w", u, dpif.ErrFlowLimit)
	}
	shown := p.Match.Key
	d.flows[u] = &dpif.Flow{UFID: u, Match: m, Shown: &shown, Actions: p.Actions, Workers: 1}
	d.order = append(d.order, u)
	return nil
}

// FlowGet implements dpif.Datapath.
func (d *Datapath) FlowGet(u dpif.UFID) (dpif.Flow, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	f, ok := d.flows[u]
	if !ok {
		return dpif.Flow{}, fmt.Errorf("dpiftest: get %s: %w", u, dpif.ErrNotFound)
	}
	return *f, nil
}

// FlowDel implements dpif.Datapath; every delete is recorded (Dels).
func (d *Datapath) FlowDel(u dpif.UFID) (dpif.FlowStats, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.dels = append(d.dels, u)
	f, ok := d.flows[u]
	if !ok {
		return dpif.FlowStats{}, fmt.Errorf("dpiftest: del %s: %w", u, dpif.ErrNotFound)
	}
	d.removeLocked(u)
	return f.Stats, nil
}

func (d *Datapath) removeLocked(u dpif.UFID) {
	delete(d.flows, u)
	for i, o := range d.order {
		if o == u {
			d.order = append(d.order[:i:i], d.order[i+1:]...)
			break
		}
	}
}

// FlowFlush implements dpif.Datapath (not recorded as deletes).
func (d *Datapath) FlowFlush() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.flows = map[dpif.UFID]*dpif.Flow{}
	d.order = nil
}

// FlowDump implements dpif.Datapath: the flows in installation order, as
// copies. fn runs without the fake's lock held.
func (d *Datapath) FlowDump(fn func(f *dpif.Flow) bool) {
	d.mu.Lock()
	fs := make([]dpif.Flow, 0, len(d.order))
	for _, u := range d.order {
		fs = append(fs, *d.flows[u])
	}
	d.mu.Unlock()
	for i := range fs {
		if !fn(&fs[i]) {
			return
		}
	}
}

// Execute implements dpif.Datapath: the packet's bytes and the actions
// are recorded (Executes); nothing is sent.
func (d *Datapath) Execute(p *packet.Packet, acts odp.Actions) error {
	if p == nil {
		return fmt.Errorf("dpiftest: execute: nil packet")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.execs = append(d.execs, Execute{Data: append([]byte(nil), p.Data()...), Actions: acts})
	return nil
}

// SetUpcallHandler implements dpif.Datapath.
func (d *Datapath) SetUpcallHandler(h dpif.UpcallHandler) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.handler = h
}

// Stats implements dpif.Datapath: the counters the fake keeps (misses,
// upcalls, flows, lost).
func (d *Datapath) Stats() dpif.Stats {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.stats
	s.Flows = uint64(len(d.flows))
	return s
}

// FlowCount implements dpif.Datapath.
func (d *Datapath) FlowCount() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.flows)
}

// ConfiguredFlowLimit implements dpif.Datapath.
func (d *Datapath) ConfiguredFlowLimit() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.flowLimit
}

// SetFlowLimit changes the configured flow limit: puts over it fail with
// dpif.ErrFlowLimit.
func (d *Datapath) SetFlowLimit(n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.flowLimit = n
}

// Close implements dpif.Datapath.
func (d *Datapath) Close() error { return nil }

// Miss injects a miss for a packet with key k into the registered
// handler, as a datapath worker makes one: if the reply asks to install,
// the megaflow (k under the reply's mask) is put as dpnetdev installs it
// and recorded among Puts with PutCreate; the packet is executed with the
// reply's actions (recorded among Executes). data may be nil (no packet,
// as a test of translation only). It returns the reply and the handler's
// error; without a handler the miss is lost.
func (d *Datapath) Miss(k flow.Key, data []byte) (dpif.MissReply, error) {
	d.mu.Lock()
	h := d.handler
	d.stats.Missed++
	if h == nil {
		d.stats.Lost++
	}
	d.mu.Unlock()
	var r dpif.MissReply
	if h == nil {
		return r, fmt.Errorf("dpiftest: miss: no upcall handler")
	}
	u := dpif.Upcall{Kind: dpif.UpcallMiss, Key: &k}
	if data != nil {
		u.Packet = packet.FromBytes(append([]byte(nil), data...))
	}
	err := h.Miss(&u, &r)
	d.mu.Lock()
	defer d.mu.Unlock()
	if err != nil {
		d.stats.UpcallFail++
		d.stats.Lost++
		return r, err
	}
	d.stats.UpcallOK++
	if r.Install {
		p := dpif.FlowPut{UFID: r.UFID, Match: flow.Match{Key: k, Mask: r.Mask}, Actions: r.Actions, Flags: dpif.PutCreate}
		d.puts = append(d.puts, p)
		// A racing install of the same megaflow is not an error for the
		// worker: it uses the one in place.
		_ = d.putLocked(&p)
	}
	if data != nil {
		d.execs = append(d.execs, Execute{Data: append([]byte(nil), data...), Actions: r.Actions})
	}
	return r, nil
}

// Userspace injects a userspace() action's upcall for a packet with key
// k into the registered handler (no-op without one).
func (d *Datapath) Userspace(k flow.Key, data []byte, act *odp.Action) {
	d.mu.Lock()
	h := d.handler
	d.mu.Unlock()
	if h == nil {
		return
	}
	u := dpif.Upcall{Kind: dpif.UpcallUserspace, Key: &k, Action: act}
	if data != nil {
		u.Packet = packet.FromBytes(append([]byte(nil), data...))
	}
	h.Userspace(&u)
}

// SetFlowStats sets the counters a megaflow reports (as if packets had
// hit it); it reports false if there is no such megaflow.
func (d *Datapath) SetFlowStats(u dpif.UFID, st dpif.FlowStats) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	f, ok := d.flows[u]
	if ok {
		f.Stats = st
	}
	return ok
}

// Puts returns the recorded puts (installs from misses included), oldest
// first.
func (d *Datapath) Puts() []dpif.FlowPut {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]dpif.FlowPut(nil), d.puts...)
}

// Dels returns the recorded deletes, oldest first.
func (d *Datapath) Dels() []dpif.UFID {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]dpif.UFID(nil), d.dels...)
}

// Executes returns the recorded executions, oldest first.
func (d *Datapath) Executes() []Execute {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]Execute(nil), d.execs...)
}

// Flows returns copies of the installed megaflows in installation order.
func (d *Datapath) Flows() []dpif.Flow {
	var out []dpif.Flow
	d.FlowDump(func(f *dpif.Flow) bool {
		out = append(out, *f)
		return true
	})
	return out
}

// Reset forgets the recorded puts, deletes and executions (the megaflows
// stay).
func (d *Datapath) Reset() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.puts, d.dels, d.execs = nil, nil, nil
}
