package xlate

import (
	"sync"
	"sync/atomic"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// Frozen is the pipeline state a recirculation resumes from: the table to
// continue at and the state that exists only in translation.
type Frozen struct {
	// Bridge names the bridge whose tables the pass resumes in (a
	// patch port may have moved translation to another bridge).
	Bridge string
	Table  uint8
	// InPort is the OpenFlow in_port at the freeze (part of the state in
	// Open vSwitch too, so each input port gets its own id).
	InPort       uint32
	Regs         [mf.NumRegs]uint32
	Metadata     uint64
	ActsetOutput uint32
	// TunID, TunSrc and TunDst are the tunnel metadata the pipeline saw
	// (it may have written tun_id): Open vSwitch freezes the tunnel
	// with the registers, and a packet-in's metadata shows it.
	TunID          uint64
	TunSrc, TunDst uint32
	// Group, with HasGroup, resumes in a dp_hash select group: its
	// bucket by dp_hash, then Rest (the remaining actions, encoded as
	// OpenFlow 1.5 instructions so the state stays comparable).
	Group    uint32
	HasGroup bool
	Rest     string
	// ActionSet is the action set at the freeze (OpenFlow 1.5 actions),
	// run at the end of the resumed pipeline.
	ActionSet string
	// Conntracked is set when ct ran before the freeze.
	Conntracked bool
	// Userdata is a controller action's userdata: its packet-in is made
	// from this state when the datapath's userspace action brings the
	// packet back (the packet has the header changes made before it).
	Userdata string
	// FromBridge and FromPort name the patch port the pass crossed to get
	// here (NORMAL's recirculation into a patch peer), for the patch
	// ports' counters.
	FromBridge string
	FromPort   uint16
}

// encodeRest encodes the rest of an action list for Frozen.Rest, as
// OpenFlow 1.5 instructions: the rest may hold instructions (goto_table,
// write_actions... after a pop_mpls recirculation), which an action list
// cannot.
func encodeRest(acts []ofp.Action) ([]byte, error) {
	return ofp.AppendOfpacts(nil, acts, mf.OF15, true)
}

// decodeRest is encodeRest's inverse.
func decodeRest(s string) ([]ofp.Action, error) {
	return ofp.DecodeOfpactsWithDebug([]byte(s), mf.OF15, true)
}

// Restore puts the pipeline state fz froze back into fl (a thawed pass,
// or the packet-in of a datapath controller action).
func (fz *Frozen) Restore(fl *mf.Flow) {
	fl.InPort = fz.InPort
	fl.Regs = fz.Regs
	fl.Metadata = fz.Metadata
	fl.ActsetOutput = fz.ActsetOutput
	fl.Key.TunID, fl.Key.TunSrc, fl.Key.TunDst = fz.TunID, fz.TunSrc, fz.TunDst
}

func freeze(bridge string, table uint8, fl *mf.Flow) Frozen {
	return Frozen{Bridge: bridge, Table: table, InPort: fl.InPort, Regs: fl.Regs, Metadata: fl.Metadata, ActsetOutput: fl.ActsetOutput,
		TunID: fl.Key.TunID, TunSrc: fl.Key.TunSrc, TunDst: fl.Key.TunDst}
}

// RecircTable maps recirculation ids to frozen states. Identical states
// share an id, so the number of ids is bounded by the distinct states the
// flow tables can produce. It is shared by the bridges of one datapath
// (ids are datapath-wide) and safe for concurrent use.
type RecircTable struct {
	mu      sync.RWMutex
	byState map[Frozen]uint32
	byID    map[uint32]Frozen
	next    uint32
	// bridges are the translators of the datapath's bridges by name,
	// for patch ports and for resuming a frozen pass.
	bridges map[string]*Xlator
	// env is the native tunnelling environment (tunnel.go).
	env TunnelEnv
	// noTnlPushPop and noClone are the datapath's tnl_push_pop and
	// clone support switched off at run time, sampleNesting its sample
	// nesting lowered (0: not lowered) (support.go).
	noTnlPushPop, noClone, noCheckPktLen atomic.Bool
	sampleNesting                        atomic.Int32

	// Readers is the translation lock of the datapath's bridges: every
	// translation holds it shared, and a flow table commit takes it
	// exclusively to free removed rules (oftable.Config.Readers).
	Readers sync.RWMutex
}

// Register makes a bridge's translator reachable by name (nil removes
// it).
func (t *RecircTable) Register(name string, x *Xlator) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if x == nil {
		delete(t.bridges, name)
		return
	}
	t.bridges[name] = x
}

// Bridges returns the names of the registered bridges.
func (t *RecircTable) Bridges() []string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := make([]string, 0, len(t.bridges))
	for n := range t.bridges {
		out = append(out, n)
	}
	return out
}

// bridge returns a registered translator.
func (t *RecircTable) bridge(name string) *Xlator {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.bridges[name]
}

// NewRecircTable returns an empty table; ids start at 1 (0 means "not
// recirculated").
func NewRecircTable() *RecircTable {
	return &RecircTable{byState: map[Frozen]uint32{}, byID: map[uint32]Frozen{}, next: 1, bridges: map[string]*Xlator{}}
}

// ID returns the id of state fz, allocating one if needed.
func (t *RecircTable) ID(fz Frozen) uint32 {
	t.mu.RLock()
	id, ok := t.byState[fz]
	t.mu.RUnlock()
	if ok {
		return id
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if id, ok := t.byState[fz]; ok {
		return id
	}
	id = t.next
	t.next++
	t.byState[fz] = id
	t.byID[id] = fz
	return id
}

// Get returns the state of id.
func (t *RecircTable) Get(id uint32) (Frozen, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	fz, ok := t.byID[id]
	return fz, ok
}

// Len returns the number of ids in use.
func (t *RecircTable) Len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.byID)
}
