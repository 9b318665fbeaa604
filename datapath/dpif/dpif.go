package dpif

import (
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/netdev"
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/datapath/packet"
)

// PortNo is a datapath port number (odp port).
type PortNo = uint32

const (
	// PortLocal is the bridge's local (internal) port, as ODPP_LOCAL.
	PortLocal PortNo = 0
	// PortNone means "no port", as ODPP_NONE.
	PortNone PortNo = 0xffffffff
)

// UFID is a unique flow identifier (128 bits), as Open vSwitch's ufid.
type UFID [16]byte

// ParseUFID reads a UFID as Open vSwitch writes it ("ufid:" and
// 8-4-4-4-12 hex groups; the dashes may be left out).
func ParseUFID(s string) (UFID, error) {
	var u UFID
	h := strings.ReplaceAll(strings.TrimPrefix(s, "ufid:"), "-", "")
	if !strings.HasPrefix(s, "ufid:") || len(h) != 32 {
		return u, fmt.Errorf("%q is not a UFID", s)
	}
	if _, err := hex.Decode(u[:], []byte(h)); err != nil {
		return u, fmt.Errorf("%q is not a UFID: %w", s, err)
	}
	return u, nil
}

// String formats the UFID as Open vSwitch prints it
// (8-4-4-4-12 hex groups).
func (u UFID) String() string {
	var b [36]byte
	h := hex.EncodeToString(u[:])
	copy(b[0:8], h[0:8])
	b[8] = '-'
	copy(b[9:13], h[8:12])
	b[13] = '-'
	copy(b[14:18], h[12:16])
	b[18] = '-'
	copy(b[19:23], h[16:20])
	b[23] = '-'
	copy(b[24:36], h[20:32])
	return string(b[:])
}

// UFIDFromMatch derives a UFID from a megaflow's masked key and mask, so
// callers that do not track UFIDs get a stable one per megaflow.
func UFIDFromMatch(m *flow.Match) UFID {
	k := m.Key.Masked(&m.Mask)
	h1 := k.StableHash(0x6a09e667f3bcc908)
	mk := flow.Key(m.Mask)
	h2 := mk.StableHash(h1)
	var u UFID
	for i := 0; i < 8; i++ {
		u[i] = byte(h1 >> (8 * i))
		u[8+i] = byte(h2 >> (8 * i))
	}
	return u
}

// FlowStats are a megaflow's counters.
type FlowStats struct {
	Packets  uint64
	Bytes    uint64
	Used     time.Time // zero if never used
	TCPFlags uint16
}

// Add accumulates o into s.
func (s *FlowStats) Add(o FlowStats) {
	s.Packets += o.Packets
	s.Bytes += o.Bytes
	s.TCPFlags |= o.TCPFlags
	if o.Used.After(s.Used) {
		s.Used = o.Used
	}
}

// Flow is a megaflow as dumped or fetched.
type Flow struct {
	UFID  UFID
	Match flow.Match
	// Shown, if not nil, is the key as the flow was installed (its
	// first packet's values, or a put's key as given): dumps print it
	// under Match.Mask, as Open vSwitch's userspace datapath does.
	Shown   *flow.Key
	Actions odp.Actions
	Stats   FlowStats
	// Workers is how many poll-mode workers hold a copy of the flow.
	Workers int
}

// PutFlags select create/modify semantics, as DPIF_FP_*.
type PutFlags uint8

const (
	PutCreate    PutFlags = 1 << iota // create if absent
	PutModify                         // modify if present
	PutZeroStats                      // zero stats on modify
)

// FlowPut installs or modifies a megaflow.
type FlowPut struct {
	UFID    UFID // zero: derived with UFIDFromMatch
	Match   flow.Match
	Actions odp.Actions
	Flags   PutFlags
}

// Errors returned by Datapath methods.
var (
	ErrExists      = errors.New("dpif: flow exists")
	ErrNotFound    = errors.New("dpif: no such flow")
	ErrInvalid     = errors.New("dpif: invalid flow")
	ErrFlowLimit   = errors.New("dpif: flow limit reached")
	ErrNoSuchPort  = errors.New("dpif: no such port")
	ErrPortInUse   = errors.New("dpif: port number in use")
	ErrNameInUse   = errors.New("dpif: port name in use")
	ErrOverlapping = errors.New("dpif: megaflow overlaps an existing one with a different mask")
)

// TerseDumper is a Datapath that can dump its flows for a caller that
// keeps their keys itself (the revalidator, with UFIDs on): only the
// debug log differs, as in Open vSwitch, where such a dump carries the
// UFID and not the key.
type TerseDumper interface {
	FlowDumpTerse(fn func(f *Flow) bool)
}

// PortInfo describes a datapath port.
type PortInfo struct {
	No     PortNo
	Name   string
	Type   string
	Device netdev.Device
}

// UpcallKind says why a packet went to userspace.
type UpcallKind uint8

const (
	UpcallMiss      UpcallKind = iota // no megaflow matched
	UpcallUserspace                   // a userspace() action
)

func (k UpcallKind) String() string {
	switch k {
	case UpcallMiss:
		return "miss"
	case UpcallUserspace:
		return "action"
	}
	return fmt.Sprintf("upcall(%d)", uint8(k))
}

// Upcall is a packet handed to the OpenFlow layer. Packet and Key are
// valid only during the call: a handler that keeps either copies it.
type Upcall struct {
	Kind   UpcallKind
	Packet *packet.Packet
	Key    *flow.Key
	// Action is the userspace action (UpcallUserspace only).
	Action *odp.Action
	// Worker is the index of the poll-mode worker making the upcall.
	Worker int
}

// MissReply is what a handler returns for a miss: the actions to apply to
// the packet and, if Install, the megaflow (Key seen through Mask, with
// Actions) to cache.
type MissReply struct {
	Actions odp.Actions
	Mask    flow.Mask
	UFID    UFID
	Install bool
}

// UpcallHandler is implemented by the OpenFlow layer (ofproto's upcall
// package). Miss is called synchronously on the worker goroutine, as
// dpif-netdev's upcall_cb: it must not block for long.
type UpcallHandler interface {
	Miss(u *Upcall, r *MissReply) error
	Userspace(u *Upcall)
}

// Stats are datapath-wide counters, as `dpif/show` and
// `dpif-netdev/pmd-stats-show` report them.
type Stats struct {
	Hit         uint64 // packets that matched a megaflow (EMC or dpcls)
	EMCHit      uint64
	MegaflowHit uint64
	Missed      uint64 // packets that became miss upcalls
	Lost        uint64 // packets dropped because no upcall could be made
	Flows       uint64
	Masks       uint64 // distinct megaflow masks (subtables), summed over workers
	Recirc      uint64 // recirculation passes
	UpcallOK    uint64
	UpcallFail  uint64
	Lookups     uint64 // subtable lookups made for megaflow hits
}

// Config holds datapath tunables (other_config keys of Open vSwitch).
type Config struct {
	// Workers is the number of poll-mode workers (pmd-cpu-mask analogue).
	Workers int
	// DropCounters, if not nil, count what explicit drop actions drop,
	// by reason (odp.Context.DropCounters).
	DropCounters *[odp.NumDropReasons]odp.Counter
	// InvalidPort, if not nil, counts packets output to a port that
	// does not exist or cannot send (a tunnel vport, which only
	// tnl_push reaches): Open vSwitch's datapath_drop_invalid_port.
	InvalidPort odp.Counter
	// FlowLimit bounds the megaflows per worker (other_config:flow-limit).
	FlowLimit int
	// MaxIdle expires megaflows unused for this long (other_config:max-idle).
	MaxIdle time.Duration
	// EMCInsertInvProb: insert into the exact-match cache with
	// probability 1/N (other_config:emc-insert-inv-prob); 0 disables the EMC.
	EMCInsertInvProb uint32
	// UpcallRate bounds miss upcalls per second per worker; excess misses
	// are dropped and counted as Lost. 0 means no bound.
	UpcallRate int
	// Log, if set, gets the megaflow changes at debug level in Open
	// vSwitch's dpif_netdev words ("flow_add: ufid:... mega_ufid:...
	// MATCH, actions:ACTIONS"), which its test suite and operators grep.
	Log *slog.Logger
	// PutLog, if set, gets each flow put at debug level as Open
	// vSwitch's dpif module logs it ("TYPE@NAME: put[modify] KEY/MASK,
	// actions:...").
	PutLog *slog.Logger
}

// DefaultConfig returns Open vSwitch's defaults where they exist.
func DefaultConfig() Config {
	return Config{
		Workers:          1,
		FlowLimit:        200000,
		MaxIdle:          10 * time.Second,
		EMCInsertInvProb: 100,
		UpcallRate:       0,
	}
}

// Datapath is the userspace datapath as the OpenFlow layer sees it.
type Datapath interface {
	Name() string
	AddPort(dev netdev.Device, want PortNo) (PortNo, error)
	DelPort(no PortNo) error
	Port(no PortNo) (PortInfo, bool)
	PortByName(name string) (PortInfo, bool)
	Ports() []PortInfo

	FlowPut(p *FlowPut) error
	FlowGet(u UFID) (Flow, error)
	FlowDel(u UFID) (FlowStats, error)
	FlowFlush()
	FlowDump(fn func(f *Flow) bool)
	// FlowCount is the number of megaflows installed (each worker's
	// copy counted), cheap enough for every miss: the OpenFlow layer's
	// dynamic flow limit is applied against it.
	FlowCount() int
	// ConfiguredFlowLimit is other_config:flow-limit as the datapath
	// was configured: the ceiling of the dynamic flow limit.
	ConfiguredFlowLimit() int

	// Execute runs actions on a packet (packet-out). The packet is
	// consumed.
	Execute(p *packet.Packet, acts odp.Actions) error

	SetUpcallHandler(h UpcallHandler)
	Stats() Stats
	Close() error
}
