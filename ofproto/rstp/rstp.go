package rstp

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
)

// State is a port's state.
type State uint32

// The states, as Open vSwitch numbers them. Disabled is a port outside
// the tree.
const (
	Disabled State = iota
	Learning
	Forwarding
	Discarding
)

func (s State) String() string {
	switch s {
	case Disabled:
		return "Disabled"
	case Learning:
		return "Learning"
	case Forwarding:
		return "Forwarding"
	case Discarding:
		return "Discarding"
	}
	return "Unknown"
}

// Forwards reports whether packets received in state s are forwarded.
func (s State) Forwards() bool { return s == Forwarding }

// Learns reports whether MACs are learned in state s.
func (s State) Learns() bool { return s == Learning || s == Forwarding }

// ManagesBPDU reports whether BPDUs are received and sent in state s.
func (s State) ManagesBPDU() bool { return s == Discarding || s == Learning || s == Forwarding }

// Role is a port's role.
type Role int

// The roles.
const (
	RoleRoot Role = iota
	RoleDesignated
	RoleAlternate
	RoleBackup
	RoleDisabled
)

func (r Role) String() string {
	switch r {
	case RoleRoot:
		return "Root"
	case RoleDesignated:
		return "Designated"
	case RoleAlternate:
		return "Alternate"
	case RoleBackup:
		return "Backup"
	}
	return "Disabled"
}

// Defaults (times in seconds).
const (
	DefaultPriority     = 32768
	DefaultPortPriority = 128
	DefaultAgeingTime   = 300
	DefaultMaxAge       = 20
	DefaultFwdDelay     = 15
	DefaultTxHoldCount  = 6
	DefaultPortPathCost = 2000
	DefaultProtocolVer  = 2
	helloTime           = 2
	migrateTime         = 3
	MaxPorts            = 4095
	macBits             = 1<<48 - 1
	P2PForceFalse       = 0
	P2PForceTrue        = 1
	P2PAuto             = 2
)

// SpeedToCost is 802.1D-2004's recommended path cost for a speed in
// Mb/s (2000, for 10 Gb/s, when unknown).
func SpeedToCost(mbps uint) uint32 {
	switch {
	case mbps >= 10000000:
		return 2
	case mbps >= 1000000:
		return 20
	case mbps >= 100000:
		return 200
	case mbps >= 10000:
		return 2000
	case mbps >= 1000:
		return 20000
	case mbps >= 100:
		return 200000
	case mbps >= 10:
		return 2000000
	case mbps >= 1:
		return 20000000
	}
	return DefaultPortPathCost
}

// vector is a spanning tree priority vector.
type vector struct {
	RootID           uint64
	RootPathCost     uint32
	DesignatedBridge uint64
	DesignatedPort   uint16
	BridgePort       uint16
}

// cmp compares two vectors without their BridgePort: <0 when a is better.
func (a vector) cmp(b vector) int {
	switch {
	case a.RootID != b.RootID:
		return cmpU(a.RootID, b.RootID)
	case a.RootPathCost != b.RootPathCost:
		return cmpU(uint64(a.RootPathCost), uint64(b.RootPathCost))
	case a.DesignatedBridge != b.DesignatedBridge:
		return cmpU(a.DesignatedBridge, b.DesignatedBridge)
	case a.DesignatedPort != b.DesignatedPort:
		return cmpU(uint64(a.DesignatedPort), uint64(b.DesignatedPort))
	}
	return 0
}

func cmpU(a, b uint64) int {
	if a < b {
		return -1
	}
	return 1
}

type times struct{ FwdDelay, Hello, MaxAge, MessageAge uint16 }

type infoIs int

const (
	infoDisabled infoIs = iota
	infoReceived
	infoAged
	infoMine
)

type rcvdInfo int

const (
	superiorDesignated rcvdInfo = iota
	repeatedDesignated
	inferiorDesignated
	inferiorRootAlternate
	otherInfo
)

// SendFunc sends a BPDU out of the port whose Aux is aux.
type SendFunc func(aux any, bpdu []byte)

// Env is what a Bridge needs of the switch.
type Env struct {
	Send SendFunc
	Log  *slog.Logger
}

// Bridge is one bridge's rapid spanning tree.
type Bridge struct {
	mu     sync.Mutex
	name   string
	send   SendFunc
	log    *slog.Logger
	outbox []outFrame

	address, bridgeID        uint64
	priority                 int
	ageingTime               int
	forceVersion             int
	maxAge, fwdDelay, txHold int
	bridgePriority, rootPrio vector
	bridgeTimes, rootTimes   times
	rootPortID               uint16
	ports                    []*Port // by port number order of creation
	prsState                 int
}

type outFrame struct {
	aux  any
	bpdu []byte
}

// New creates bridge name's tree with address addr (a MAC in the low 48
// bits) and the default settings.
func New(name string, addr uint64, env Env) *Bridge {
	b := &Bridge{name: name, send: env.Send, log: env.Log, priority: DefaultPriority, ageingTime: DefaultAgeingTime,
		forceVersion: DefaultProtocolVer, maxAge: DefaultMaxAge, fwdDelay: DefaultFwdDelay, txHold: DefaultTxHoldCount}
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
	}
	b.address = addr & macBits
	b.updateBridgeID()
	return b
}

func (b *Bridge) lock() { b.mu.Lock() }
func (b *Bridge) unlock() {
	out := b.outbox
	b.outbox = nil
	b.mu.Unlock()
	if b.send != nil {
		for _, f := range out {
			b.send(f.aux, f.bpdu)
		}
	}
}

func (b *Bridge) updateBridgeID() {
	b.bridgeID = uint64(b.priority)<<48 | b.address
	b.bridgePriority = vector{RootID: b.bridgeID, DesignatedBridge: b.bridgeID}
	b.bridgeTimes = times{FwdDelay: uint16(b.fwdDelay), Hello: helloTime, MaxAge: uint16(b.maxAge)}
	for _, p := range b.ports {
		p.selected = false
		p.reselect = true
	}
	b.run()
}

// Name is the bridge's name.
func (b *Bridge) Name() string { return b.name }

// SetAddress sets the bridge's address.
func (b *Bridge) SetAddress(addr uint64) {
	b.lock()
	defer b.unlock()
	if addr&macBits != b.address {
		b.address = addr & macBits
		b.updateBridgeID()
	}
}

// SetPriority sets the bridge priority (0-61440, a multiple of 4096;
// others are ignored, as Open vSwitch ignores them).
func (b *Bridge) SetPriority(prio int) {
	b.lock()
	defer b.unlock()
	if prio >= 0 && prio <= 61440 && prio%4096 == 0 && prio != b.priority {
		b.priority = prio
		b.updateBridgeID()
	}
}

// SetAgeingTime sets the MAC ageing time in seconds (10-1000000).
func (b *Bridge) SetAgeingTime(s int) {
	b.lock()
	defer b.unlock()
	if s >= 10 && s <= 1000000 {
		b.ageingTime = s
	}
}

// SetForceProtocolVersion sets the protocol version: 0 runs 802.1D-1998
// compatible, 2 (the default) RSTP.
func (b *Bridge) SetForceProtocolVersion(v int) {
	b.lock()
	defer b.unlock()
	if v != b.forceVersion && (v == 0 || v == 2) {
		b.forceVersion = v
		for _, p := range b.ports {
			p.mcheck = true
		}
		b.run()
	}
}

// SetMaxAge sets the bridge max age in seconds (6-40, at least
// 2*(hello time + 1) and at most 2*(forward delay - 1)).
func (b *Bridge) SetMaxAge(s int) {
	b.lock()
	defer b.unlock()
	if s >= 6 && s <= 40 && s >= 2*(helloTime+1) && s <= 2*(b.fwdDelay-1) && s != b.maxAge {
		b.maxAge = s
		b.updateBridgeID()
	}
}

// SetForwardDelay sets the bridge forward delay in seconds (4-30,
// with max age <= 2*(forward delay - 1)).
func (b *Bridge) SetForwardDelay(s int) {
	b.lock()
	defer b.unlock()
	if s >= 4 && s <= 30 && b.maxAge <= 2*(s-1) && s != b.fwdDelay {
		b.fwdDelay = s
		b.updateBridgeID()
	}
}

// SetTransmitHoldCount sets the BPDUs a port may send a second (1-10).
func (b *Bridge) SetTransmitHoldCount(n int) {
	b.lock()
	defer b.unlock()
	if n >= 1 && n <= 10 {
		b.txHold = n
	}
}

func (b *Bridge) rstpVersion() bool { return b.forceVersion >= 2 }

// Status is the bridge's place in the tree (the Bridge rstp_status
// column).
type Status struct {
	RootID, BridgeID, DesignatedID uint64
	RootPathCost                   uint32
	DesignatedPortID, BridgePortID uint16
}

// Status returns the bridge's status.
func (b *Bridge) Status() Status {
	b.lock()
	defer b.unlock()
	return Status{RootID: b.rootPrio.RootID, BridgeID: b.bridgeID, DesignatedID: b.rootPrio.DesignatedBridge,
		RootPathCost: b.rootPrio.RootPathCost, DesignatedPortID: b.rootPrio.DesignatedPort, BridgePortID: b.rootPrio.BridgePort}
}

// FormatID prints a bridge ID as Open vSwitch's status columns do
// (priority, system ID extension, address).
func FormatID(id uint64) string {
	return fmt.Sprintf("%01x.%03x.%012x", id>>60, id>>48&0xfff, id&macBits)
}

// Port is one port of the tree.
type Port struct {
	b        *Bridge
	name     string
	aux      any
	number   int
	priority int
	portID   uint16
	pathCost uint32
	state    atomic.Uint32
	reported State
	changed  bool

	adminEdge, autoEdge, adminPortState, macOperational bool
	adminP2P                                            int
	operP2P                                             bool

	// 802.1D-2004 17.19 variables
	agree, agreed, disputed, fdbFlush, forward, forwarding    bool
	learn, learning, mcheck, newInfo, operEdge, portEnabled   bool
	proposed, proposing, rcvdBPDU, rcvdMsg, rcvdRSTP, rcvdSTP bool
	rcvdTc, rcvdTcAck, rcvdTcn, reRoot, reselect, selected    bool
	sendRSTP, sync, synced, tcAck, tcProp, updtInfo           bool
	info                                                      infoIs
	rcvd                                                      rcvdInfo
	role, selectedRole                                        Role
	designatedPrio, msgPrio, portPrio                         vector
	designatedTimes, msgTimes, portTimes                      times
	msg                                                       BPDU
	txCount                                                   int

	edgeDelayWhile, fdWhile, helloWhen, mdelayWhile int
	rbWhile, rcvdInfoWhile, rrWhile, tcWhile        int

	prx, ppm, bdm, ptx, pim, prt, pst, tcm int

	tx, rx, errs int
	uptime       int
}

// AddPort adds a port (disabled until Set and SetMACOperational).
func (b *Bridge) AddPort() *Port {
	b.lock()
	defer b.unlock()
	p := &Port{b: b, priority: DefaultPortPriority, pathCost: DefaultPortPathCost, adminPortState: true, autoEdge: true,
		adminP2P: P2PForceTrue}
	p.state.Store(uint32(Discarding))
	p.reported = Disabled
	b.ports = append(b.ports, p)
	return p
}

// RemovePort takes p out of the tree.
func (b *Bridge) RemovePort(p *Port) {
	b.lock()
	defer b.unlock()
	for i, q := range b.ports {
		if q == p {
			b.ports = append(b.ports[:i], b.ports[i+1:]...)
			break
		}
	}
	p.state.Store(uint32(Disabled))
	for _, q := range b.ports {
		q.reselect, q.selected = true, false
	}
	b.run()
}

// PortSettings are a port's settings (port_configure_rstp).
type PortSettings struct {
	Number                       int // 0: the first free
	Priority                     int
	PathCost                     uint32
	AdminEdge, AutoEdge, AdminUp bool
	AdminP2P                     int
	MCheck                       bool
}

// Set configures the port; name names it in rstp/show and the log, aux
// is the switch's data given back to Send.
func (p *Port) Set(s PortSettings, name string, aux any) {
	b := p.b
	b.lock()
	defer b.unlock()
	p.name, p.aux = name, aux
	num := s.Number
	if num == 0 || num > MaxPorts || b.numberUsed(num, p) {
		if p.number != 0 && (s.Number == 0) {
			num = p.number
		} else {
			num = b.firstFreeNumber(p)
		}
	}
	prio := p.priority
	if s.Priority >= 0 && s.Priority <= 240 && s.Priority%16 == 0 {
		prio = s.Priority
	}
	reinit := num != p.number || prio != p.priority
	p.number, p.priority = num, prio
	p.portID = uint16(p.number | p.priority<<8)
	if s.PathCost >= 1 && s.PathCost <= 200000000 && s.PathCost != p.pathCost {
		p.pathCost = s.PathCost
		reinit = true
	}
	p.adminEdge, p.autoEdge, p.adminP2P = s.AdminEdge, s.AutoEdge, s.AdminP2P
	p.adminPortState = s.AdminUp
	p.operP2P = s.AdminP2P == P2PForceTrue || s.AdminP2P == P2PAuto
	if s.MCheck && b.rstpVersion() {
		p.mcheck = true
	}
	if reinit {
		p.initialize()
	}
	p.updatePortEnabled()
	b.run()
}

func (b *Bridge) numberUsed(n int, except *Port) bool {
	for _, q := range b.ports {
		if q != except && q.number == n {
			return true
		}
	}
	return false
}

func (b *Bridge) firstFreeNumber(p *Port) int {
	for n := 1; n <= MaxPorts; n++ {
		if !b.numberUsed(n, p) {
			return n
		}
	}
	return 0
}

// SetMACOperational sets whether the port's link is up.
func (p *Port) SetMACOperational(up bool) {
	p.b.lock()
	defer p.b.unlock()
	if p.macOperational != up {
		p.macOperational = up
		p.updatePortEnabled()
		p.b.run()
	}
}

func (p *Port) updatePortEnabled() { p.portEnabled = p.macOperational && p.adminPortState }

// initialize is BEGIN for one port's machines.
func (p *Port) initialize() {
	p.prx, p.ppm, p.bdm, p.ptx, p.pim, p.prt, p.pst, p.tcm = 0, 0, 0, 0, 0, 0, 0, 0
	p.selectedRole, p.reselect, p.selected = RoleDisabled, true, false
}

// State is the port's state; it may be read without the lock.
func (p *Port) State() State { return State(p.state.Load()) }

// Name is the port's name.
func (p *Port) Name() string {
	p.b.lock()
	defer p.b.unlock()
	return p.name
}

// Aux returns the switch's data for the port.
func (p *Port) Aux() any {
	p.b.lock()
	defer p.b.unlock()
	return p.aux
}

// PortStatus is a port's status (the Port rstp_status and
// rstp_statistics columns).
type PortStatus struct {
	ID                 uint16
	State              State
	Role               Role
	DesignatedBridgeID uint64
	DesignatedPortID   uint16
	DesignatedPathCost uint32
	Tx, Rx, Errors     int
	Uptime             int
}

// Status returns the port's status.
func (p *Port) Status() PortStatus {
	p.b.lock()
	defer p.b.unlock()
	return PortStatus{ID: p.portID, State: p.State(), Role: p.role, DesignatedBridgeID: p.portPrio.DesignatedBridge,
		DesignatedPortID: p.portPrio.DesignatedPort, DesignatedPathCost: p.portPrio.RootPathCost,
		Tx: p.tx, Rx: p.rx, Errors: p.errs, Uptime: p.uptime}
}

// ChangedPort returns a port whose state changed since it was last
// returned, or nil.
func (b *Bridge) ChangedPort() *Port {
	b.lock()
	defer b.unlock()
	for _, p := range b.ports {
		if p.changed {
			p.changed = false
			return p
		}
	}
	return nil
}

// FlushPorts returns the ports whose learned MACs must go (fdbFlush)
// and resets their flags (the machines then move on).
func (b *Bridge) FlushPorts() []*Port {
	b.lock()
	defer b.unlock()
	var out []*Port
	for _, p := range b.ports {
		if p.fdbFlush {
			p.fdbFlush = false
			out = append(out, p)
		}
	}
	if len(out) > 0 {
		b.run()
	}
	return out
}

// Received processes a received BPDU (what follows the LLC header).
func (p *Port) Received(bpdu []byte) {
	b := p.b
	b.lock()
	defer b.unlock()
	if !p.portEnabled {
		return
	}
	d, err := Decode(bpdu)
	if err != nil {
		p.errs++
		switch {
		case errors.Is(err, ErrRunt), errors.Is(err, ErrSize):
			b.log.Debug(fmt.Sprintf("%s, port %d: received BPDU of invalid size %d", b.name, p.number, len(bpdu)))
		default:
			b.log.Debug(fmt.Sprintf("%s, port %d: received BPDU with error: %v", b.name, p.number, err))
		}
		return
	}
	if d.Type == TypeConfig && d.BridgeID == b.bridgeID && d.PortID == p.portID {
		return // a loop of our own BPDU back to the port that sent it
	}
	p.rx++
	p.msg = d
	p.rcvdBPDU = true
	b.run()
}

// Tick runs the port timers for one second (Open vSwitch ticks once a
// second, whatever the time since the last tick).
func (b *Bridge) Tick() {
	b.lock()
	defer b.unlock()
	for _, p := range b.ports {
		dec := func(v *int) {
			if *v > 0 {
				*v--
			}
		}
		dec(&p.helloWhen)
		dec(&p.tcWhile)
		dec(&p.fdWhile)
		dec(&p.rcvdInfoWhile)
		dec(&p.rrWhile)
		dec(&p.rbWhile)
		dec(&p.mdelayWhile)
		dec(&p.edgeDelayWhile)
		dec(&p.txCount)
		p.uptime++
	}
	b.run()
}
