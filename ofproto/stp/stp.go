package stp

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/gvs-project/gvs/internal/logrl"
)

// State is a port's state; each is a distinct bit, as Open vSwitch's.
type State uint32

// The port states. A port of the tree whose link is down is Disabled and
// does not forward; a port left out of the tree (stp-enable=false) has no
// Port at all and forwards.
const (
	Disabled   State = 1 << 0
	Listening  State = 1 << 1
	Learning   State = 1 << 2
	Forwarding State = 1 << 3
	Blocking   State = 1 << 4
)

// String is the state's name in stp/show, the Port status column and the
// log.
func (s State) String() string {
	switch s {
	case Disabled:
		return "disabled"
	case Listening:
		return "listening"
	case Learning:
		return "learning"
	case Forwarding:
		return "forwarding"
	case Blocking:
		return "blocking"
	}
	return fmt.Sprintf("state%d", uint32(s))
}

// Forwards reports whether packets received in state s are forwarded.
func (s State) Forwards() bool { return s&Forwarding != 0 }

// Learns reports whether MACs are learned from packets received in s.
func (s State) Learns() bool { return s&(Learning|Forwarding) != 0 }

// ForwardsBPDU reports whether BPDUs may go out of (or through) a port
// in state s: every state but blocking.
func (s State) ForwardsBPDU() bool { return s&(Disabled|Listening|Learning|Forwarding) != 0 }

// Role is a port's role.
type Role int

// The roles.
const (
	RoleRoot Role = iota
	RoleDesignated
	RoleAlternate
	RoleDisabled
)

func (r Role) String() string {
	switch r {
	case RoleRoot:
		return "root"
	case RoleDesignated:
		return "designated"
	case RoleAlternate:
		return "alternate"
	}
	return "disabled"
}

// Defaults, in milliseconds for times.
const (
	MaxPorts            = 255
	DefaultPriority     = 32768
	DefaultPortPriority = 128
	DefaultMaxAge       = 20000
	DefaultHelloTime    = 2000
	DefaultFwdDelay     = 15000
)

// messageAgeIncrement is what a bridge adds to the age of the root's
// information it relays, in ticks.
const messageAgeIncrement = 1

type timer struct {
	active bool
	value  int
}

func (t *timer) start(v int) { t.value, t.active = v, true }
func (t *timer) stop()       { t.active = false }

// expired advances an active timer by elapsed ticks and stops it when it
// reaches timeout.
func (t *timer) expired(elapsed, timeout int) bool {
	if !t.active {
		return false
	}
	t.value += elapsed
	if t.value >= timeout {
		t.active = false
		return true
	}
	return false
}

func msToTicks(ms int) int { return ms * 256 / 1000 }
func ticksToMS(t int) int  { return t * 1000 / 256 }

// Port is one of a Bridge's 255 ports.
type Port struct {
	b    *Bridge
	no   int
	name string
	// Aux is the switch's own data for the port (set while enabled).
	aux any

	id               int
	state            State
	pubState         atomic.Uint32 // state, for readers without the lock
	pathCost         int
	designatedRoot   uint64
	designatedCost   int
	designatedBridge uint64
	designatedPort   int
	tcAck            bool
	configPending    bool
	changeDetection  bool

	messageAge, fwdDelay, hold timer

	tx, rx, errs int
	changed      bool
}

// SendFunc sends a frame's BPDU out of port number no (the switch adds
// the source address: Frame's src is zero).
type SendFunc func(no int, bpdu []byte)

// Bridge is one bridge's spanning tree.
type Bridge struct {
	mu   sync.Mutex
	name string
	send SendFunc
	log  *slog.Logger
	tcRL *logrl.Limit
	now  func() int64
	// outbox holds what was sent under the lock, delivered after.
	outbox []outFrame

	bridgeID                              uint64
	maxAge, helloTime, fwdDelay           int
	bridgeMaxAge, bridgeHello, bridgeFwd  int
	rqMaxAge, rqHello, rqFwd              int
	remainder                             int
	designatedRoot                        uint64
	rootPathCost                          int
	root                                  *Port
	tcDetected, tc                        bool
	helloTimer, tcnTimer, topoChangeTimer timer
	ports                                 [MaxPorts]Port
	fdbFlush                              bool
	firstChanged                          int
}

type outFrame struct {
	no   int
	bpdu []byte
}

// Env is what a Bridge needs of the switch: where BPDUs go, the "stp"
// log module and the clock (milliseconds) its rate-limited lines use.
type Env struct {
	Send SendFunc
	Log  *slog.Logger
	Now  func() int64
}

// New creates the spanning tree of bridge name with bridge ID id (a MAC
// address in the low 48 bits; without priority bits the default priority
// is used). Every port starts disabled.
func New(name string, id uint64, env Env) *Bridge {
	b := &Bridge{name: name, send: env.Send, log: env.Log, now: env.Now, tcRL: logrl.New(1, 5)}
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
	}
	if b.now == nil {
		b.now = func() int64 { return 0 }
	}
	b.bridgeID = id
	if id>>48 == 0 {
		b.bridgeID |= uint64(DefaultPriority) << 48
	}
	b.rqMaxAge, b.rqHello, b.rqFwd = DefaultMaxAge, DefaultHelloTime, DefaultFwdDelay
	b.updateBridgeTimers()
	b.maxAge, b.helloTime, b.fwdDelay = b.bridgeMaxAge, b.bridgeHello, b.bridgeFwd
	b.designatedRoot = b.bridgeID
	b.helloTimer.start(0)
	b.firstChanged = MaxPorts
	for i := range b.ports {
		p := &b.ports[i]
		p.b, p.no = b, i
		p.id = (i + 1) | DefaultPortPriority<<8
		p.pathCost = 2
		p.initialize(Disabled)
	}
	return b
}

// lock and unlock guard the bridge; unlock delivers what was sent.
func (b *Bridge) lock() { b.mu.Lock() }
func (b *Bridge) unlock() {
	out := b.outbox
	b.outbox = nil
	b.mu.Unlock()
	if b.send != nil {
		for _, f := range out {
			b.send(f.no, f.bpdu)
		}
	}
}

// Name is the bridge's name.
func (b *Bridge) Name() string { return b.name }

// Tick runs the timers for ms milliseconds (remainders below a tick are
// kept for the next call).
func (b *Bridge) Tick(ms int) {
	b.lock()
	defer b.unlock()
	ms = max(0, min(ms, 1<<30)) + b.remainder
	elapsed := msToTicks(ms)
	b.remainder = ms - ticksToMS(elapsed)
	if elapsed == 0 {
		return
	}
	if b.helloTimer.expired(elapsed, b.helloTime) {
		b.configBPDUGeneration()
		b.helloTimer.start(0)
	}
	if b.tcnTimer.expired(elapsed, b.bridgeHello) {
		b.transmitTCN()
		b.tcnTimer.start(0)
	}
	if b.topoChangeTimer.expired(elapsed, b.maxAge+b.fwdDelay) {
		b.tcDetected, b.tc = false, false
	}
	for i := range b.ports {
		if p := &b.ports[i]; p.state != Disabled && p.messageAge.expired(elapsed, b.maxAge) {
			p.messageAgeExpiry()
		}
	}
	for i := range b.ports {
		p := &b.ports[i]
		if p.state == Disabled {
			continue
		}
		if p.fwdDelay.expired(elapsed, b.fwdDelay) {
			p.fwdDelayExpiry()
		}
		if p.hold.expired(elapsed, msToTicks(1000)) && p.configPending {
			p.transmitConfig()
		}
	}
}

func (b *Bridge) setBridgeID(id uint64) {
	if id == b.bridgeID {
		return
	}
	root := b.isRoot()
	for i := range b.ports {
		if p := &b.ports[i]; p.state != Disabled && p.isDesignated() {
			p.designatedBridge = id
		}
	}
	b.bridgeID = id
	b.configurationUpdate()
	b.portStateSelection()
	if b.isRoot() && !root {
		b.becomeRoot()
	}
}

const macBits = 1<<48 - 1

// SetBridgeID sets the MAC half of the bridge ID.
func (b *Bridge) SetBridgeID(id uint64) {
	b.lock()
	defer b.unlock()
	b.setBridgeID(b.bridgeID&^macBits | id&macBits)
}

// SetPriority sets the priority half of the bridge ID.
func (b *Bridge) SetPriority(prio uint16) {
	b.lock()
	defer b.unlock()
	b.setBridgeID(b.bridgeID&macBits | uint64(prio)<<48)
}

// SetHelloTime, SetMaxAge and SetForwardDelay set the times (ms) the
// bridge uses as root, clamped as 802.1D requires.
func (b *Bridge) SetHelloTime(ms int) { b.setTimes(&b.rqHello, ms) }

// SetMaxAge sets the requested max age in ms.
func (b *Bridge) SetMaxAge(ms int) { b.setTimes(&b.rqMaxAge, ms) }

// SetForwardDelay sets the requested forward delay in ms.
func (b *Bridge) SetForwardDelay(ms int) { b.setTimes(&b.rqFwd, ms) }

func (b *Bridge) setTimes(f *int, ms int) {
	b.lock()
	defer b.unlock()
	*f = ms
	b.updateBridgeTimers()
}

func (b *Bridge) updateBridgeTimers() {
	ht := max(1000, min(b.rqHello, 10000))
	ma := max(max(2*(ht+1000), 6000), min(b.rqMaxAge, 40000))
	fd := max(ma/2+1000, min(b.rqFwd, 30000))
	b.bridgeHello, b.bridgeMaxAge, b.bridgeFwd = msToTicks(ht), msToTicks(ma), msToTicks(fd)
	if b.isRoot() {
		b.maxAge, b.helloTime, b.fwdDelay = b.bridgeMaxAge, b.bridgeHello, b.bridgeFwd
	}
}

// Status is the bridge's identity and place in the tree.
type Status struct {
	BridgeID, DesignatedRoot uint64
	RootPathCost             int
}

// Status returns the bridge's status (the Bridge status column).
func (b *Bridge) Status() Status {
	b.lock()
	defer b.unlock()
	return Status{BridgeID: b.bridgeID, DesignatedRoot: b.designatedRoot, RootPathCost: b.rootPathCost}
}

// FormatID prints a bridge ID as Open vSwitch's status columns do.
func FormatID(id uint64) string { return fmt.Sprintf("%04x.%012x", id>>48, id&macBits) }

// CheckAndResetFDBFlush reports whether the MAC table must be flushed
// since the last call.
func (b *Bridge) CheckAndResetFDBFlush() bool {
	b.lock()
	defer b.unlock()
	f := b.fdbFlush
	b.fdbFlush = false
	return f
}

// Port returns port number no (0 to 254).
func (b *Bridge) Port(no int) *Port { return &b.ports[no] }

// ChangedPort returns a port whose state changed since it was last
// returned, in port order, or nil.
func (b *Bridge) ChangedPort() *Port {
	b.lock()
	defer b.unlock()
	for i := b.firstChanged; i < MaxPorts; i++ {
		if p := &b.ports[i]; p.changed {
			p.changed = false
			b.firstChanged = i + 1
			return p
		}
	}
	b.firstChanged = MaxPorts
	return nil
}

// TopologyChange is stp/tcn: the bridge detects a topology change.
func (b *Bridge) TopologyChange() {
	b.lock()
	defer b.unlock()
	b.topologyChangeDetection()
}

func (b *Bridge) isRoot() bool { return b.bridgeID == b.designatedRoot }

func (b *Bridge) configBPDUGeneration() {
	for i := range b.ports {
		if p := &b.ports[i]; p.state != Disabled && p.isDesignated() {
			p.transmitConfig()
		}
	}
}

func (b *Bridge) transmitTCN() {
	if b.root == nil {
		return
	}
	b.log.Debug(fmt.Sprintf("bridge: %s, root port: %s, transmit tcn", b.name, b.root.name))
	d := BPDU{Type: TypeTCN}
	b.root.sendBPDU(d.Encode())
}

func (b *Bridge) configurationUpdate() {
	b.rootSelection()
	b.designatedPortSelection()
}

// supersedesRoot: p offers a better path to the root than root does.
func supersedesRoot(root, p *Port) bool {
	pc, rc := p.designatedCost+p.pathCost, root.designatedCost+root.pathCost
	switch {
	case p.designatedRoot != root.designatedRoot:
		return p.designatedRoot < root.designatedRoot
	case pc != rc:
		return pc < rc
	case p.designatedBridge != root.designatedBridge:
		return p.designatedBridge < root.designatedBridge
	case p.designatedPort != root.designatedPort:
		return p.designatedPort < root.designatedPort
	}
	return p.id < root.id
}

func (b *Bridge) rootSelection() {
	var root *Port
	for i := range b.ports {
		p := &b.ports[i]
		if p.state == Disabled || p.isDesignated() || p.designatedRoot >= b.bridgeID {
			continue
		}
		if root == nil || supersedesRoot(root, p) {
			root = p
		}
	}
	b.root = root
	if root == nil {
		b.designatedRoot, b.rootPathCost = b.bridgeID, 0
	} else {
		b.designatedRoot, b.rootPathCost = root.designatedRoot, root.designatedCost+root.pathCost
	}
}

func (b *Bridge) designatedPortSelection() {
	for i := range b.ports {
		p := &b.ports[i]
		if p.state == Disabled {
			continue
		}
		if p.isDesignated() || p.designatedRoot != b.designatedRoot || b.rootPathCost < p.designatedCost ||
			(b.rootPathCost == p.designatedCost && (b.bridgeID < p.designatedBridge ||
				(b.bridgeID == p.designatedBridge && p.id <= p.designatedPort))) {
			p.becomeDesignated()
		}
	}
}

func (b *Bridge) portStateSelection() {
	for i := range b.ports {
		p := &b.ports[i]
		switch {
		case p.state == Disabled:
		case p == b.root:
			p.configPending, p.tcAck = false, false
			p.makeForwarding()
		case p.isDesignated():
			p.messageAge.stop()
			p.makeForwarding()
		default:
			p.configPending, p.tcAck = false, false
			p.makeBlocking()
		}
	}
}

func (b *Bridge) topologyChangeDetection() {
	if b.isRoot() {
		b.tc = true
		b.topoChangeTimer.start(0)
	} else if !b.tcDetected {
		b.transmitTCN()
		b.tcnTimer.start(0)
	}
	b.fdbFlush, b.tcDetected = true, true
	msg := b.name + ": detected topology change."
	if b.tcRL.Allow(b.log, slog.LevelInfo, b.now()) {
		b.log.Info(msg)
	}
}

func (b *Bridge) becomeRoot() {
	b.maxAge, b.helloTime, b.fwdDelay = b.bridgeMaxAge, b.bridgeHello, b.bridgeFwd
	b.topologyChangeDetection()
	b.tcnTimer.stop()
	b.configBPDUGeneration()
	b.helloTimer.start(0)
}

func (b *Bridge) designatedForSomePort() bool {
	for i := range b.ports {
		if p := &b.ports[i]; p.state != Disabled && p.designatedBridge == b.bridgeID {
			return true
		}
	}
	return false
}

// Port methods.

// No is the port's number (0 to 254).
func (p *Port) No() int { return p.no }

// Name is the port's name.
func (p *Port) Name() string {
	p.b.lock()
	defer p.b.unlock()
	return p.name
}

// SetName names the port for stp/show and the log.
func (p *Port) SetName(name string) {
	p.b.lock()
	defer p.b.unlock()
	p.name = name
}

// Aux returns what SetAux stored (nil once the port is disabled).
func (p *Port) Aux() any {
	p.b.lock()
	defer p.b.unlock()
	return p.aux
}

// SetAux stores the switch's data for the port.
func (p *Port) SetAux(a any) {
	p.b.lock()
	defer p.b.unlock()
	p.aux = a
}

// State is the port's state; it may be read without the bridge's lock
// (translation reads it for every packet).
func (p *Port) State() State { return State(p.pubState.Load()) }

// PortStatus is a port's identifier, state and role.
type PortStatus struct {
	ID    int
	State State
	Role  Role
}

// Status returns the port's status (the Port status column).
func (p *Port) Status() PortStatus {
	p.b.lock()
	defer p.b.unlock()
	return PortStatus{ID: p.id, State: p.state, Role: p.role()}
}

// Counts returns the BPDUs sent, received and refused.
func (p *Port) Counts() (tx, rx, errs int) {
	p.b.lock()
	defer p.b.unlock()
	return p.tx, p.rx, p.errs
}

func (p *Port) role() Role {
	switch {
	case p.b.root != nil && p.b.root.id == p.id:
		return RoleRoot
	case p.isDesignated():
		return RoleDesignated
	case p.state == Disabled:
		return RoleDisabled
	}
	return RoleAlternate
}

// Enable brings a disabled port into the tree (blocking, then whatever
// the selection makes it).
func (p *Port) Enable() {
	p.b.lock()
	defer p.b.unlock()
	if p.state == Disabled {
		p.initialize(Blocking)
		p.b.portStateSelection()
	}
}

// Disable takes the port out of the tree.
func (p *Port) Disable() {
	b := p.b
	b.lock()
	defer b.unlock()
	if p.state == Disabled {
		return
	}
	root := b.isRoot()
	p.becomeDesignated()
	p.setState(Disabled)
	p.tcAck, p.configPending = false, false
	p.messageAge.stop()
	p.fwdDelay.stop()
	b.configurationUpdate()
	b.portStateSelection()
	if b.isRoot() && !root {
		b.becomeRoot()
	}
	p.aux = nil
}

// SetPriority sets the priority half of the port ID.
func (p *Port) SetPriority(prio uint8) {
	b := p.b
	b.lock()
	defer b.unlock()
	id := p.id&0xff | int(prio)<<8
	if id == p.id {
		return
	}
	if p.isDesignated() {
		p.designatedPort = id
	}
	p.id = id
	if b.bridgeID == p.designatedBridge && p.id < p.designatedPort {
		p.becomeDesignated()
		b.portStateSelection()
	}
}

// SpeedToCost is 802.1D's recommended path cost for a link speed in
// Mb/s (2, for 10 Gb/s, when unknown).
func SpeedToCost(mbps uint) uint16 {
	switch {
	case mbps >= 10000:
		return 2
	case mbps >= 1000:
		return 4
	case mbps >= 100:
		return 19
	case mbps >= 16:
		return 62
	case mbps >= 10:
		return 100
	case mbps >= 4:
		return 250
	}
	return 2
}

// SetPathCost sets the port's path cost.
func (p *Port) SetPathCost(cost uint16) {
	b := p.b
	b.lock()
	defer b.unlock()
	if p.pathCost != int(cost) {
		p.pathCost = int(cost)
		b.configurationUpdate()
		b.portStateSelection()
	}
}

// SetChangeDetection turns topology change detection on the port on or
// off (on by default).
func (p *Port) SetChangeDetection(on bool) {
	p.b.lock()
	defer p.b.unlock()
	p.changeDetection = on
}

// Received processes a received BPDU (what follows the LLC header). A
// disabled port ignores it.
func (p *Port) Received(bpdu []byte) {
	b := p.b
	b.lock()
	defer b.unlock()
	if p.state == Disabled {
		return
	}
	d, err := Decode(bpdu)
	if err != nil {
		p.errs++
		switch {
		case errors.Is(err, ErrRunt):
			b.log.Warn(fmt.Sprintf("%s: received runt %d-byte BPDU", b.name, len(bpdu)))
		case errors.Is(err, ErrProtocol):
			b.log.Warn(fmt.Sprintf("%s: received BPDU with unexpected protocol ID %d", b.name, uint16(bpdu[0])<<8|uint16(bpdu[1])))
		case errors.Is(err, ErrSize) && d.Type == TypeConfig:
			b.log.Warn(fmt.Sprintf("%s: received config BPDU with invalid size %d", b.name, len(bpdu)))
		case errors.Is(err, ErrSize):
			b.log.Warn(fmt.Sprintf("%s: received TCN BPDU with invalid size %d", b.name, len(bpdu)))
		default:
			b.log.Warn(fmt.Sprintf("%s: received BPDU of unexpected type %d", b.name, d.Type))
		}
		return
	}
	if d.Version != 0 {
		b.log.Debug(fmt.Sprintf("%s: received BPDU with unexpected protocol version %d", b.name, d.Version))
	}
	if d.Type == TypeConfig {
		p.receivedConfig(&d)
	} else if p.isDesignated() {
		b.topologyChangeDetection()
		p.tcAck = true
		p.transmitConfig()
	}
	p.rx++
}

func (p *Port) receivedConfig(d *BPDU) {
	b := p.b
	if d.MessageAge >= d.MaxAge {
		b.log.Warn(fmt.Sprintf("%s: received config BPDU with message age (%d) greater than max age (%d)", b.name, d.MessageAge, d.MaxAge))
		return
	}
	root := b.isRoot()
	if !p.supersedes(d) {
		if p.isDesignated() {
			p.transmitConfig()
		}
		return
	}
	p.designatedRoot, p.designatedCost = d.RootID, int(d.RootPathCost)
	p.designatedBridge, p.designatedPort = d.BridgeID, int(d.PortID)
	p.messageAge.start(int(d.MessageAge))
	b.configurationUpdate()
	b.portStateSelection()
	if !b.isRoot() && root {
		b.helloTimer.stop()
		if b.tcDetected {
			b.topoChangeTimer.stop()
			b.transmitTCN()
			b.tcnTimer.start(0)
		}
	}
	if p == b.root {
		b.maxAge, b.helloTime, b.fwdDelay = int(d.MaxAge), int(d.HelloTime), int(d.FwdDelay)
		b.tc = d.Flags&FlagTopologyChange != 0
		b.configBPDUGeneration()
		if d.Flags&FlagTopologyChangeAck != 0 {
			b.tcDetected = false
			b.tcnTimer.stop()
		}
		if d.Flags&FlagTopologyChange != 0 {
			b.fdbFlush = true
		}
	}
}

// supersedes: the received information is better than, or a newer copy
// of, what the port holds.
func (p *Port) supersedes(d *BPDU) bool {
	switch {
	case d.RootID != p.designatedRoot:
		return d.RootID < p.designatedRoot
	case int(d.RootPathCost) != p.designatedCost:
		return int(d.RootPathCost) < p.designatedCost
	case d.BridgeID != p.designatedBridge:
		return d.BridgeID < p.designatedBridge
	}
	return d.BridgeID != p.b.bridgeID || int(d.PortID) <= p.designatedPort
}

func (p *Port) isDesignated() bool {
	return p.designatedBridge == p.b.bridgeID && p.designatedPort == p.id
}

func (p *Port) becomeDesignated() {
	b := p.b
	p.designatedRoot, p.designatedCost = b.designatedRoot, b.rootPathCost
	p.designatedBridge, p.designatedPort = b.bridgeID, p.id
}

func (p *Port) makeForwarding() {
	if p.state == Blocking {
		p.setState(Listening)
		p.fwdDelay.start(0)
	}
}

func (p *Port) makeBlocking() {
	if p.state&(Disabled|Blocking) != 0 {
		return
	}
	if p.state&(Forwarding|Learning) != 0 && p.changeDetection {
		p.b.topologyChangeDetection()
	}
	p.setState(Blocking)
	p.fwdDelay.stop()
}

func (p *Port) setState(s State) {
	if s != p.state && !p.changed {
		p.changed = true
		p.b.firstChanged = min(p.b.firstChanged, p.no)
	}
	p.state = s
	p.pubState.Store(uint32(s))
}

func (p *Port) initialize(s State) {
	p.becomeDesignated()
	if p.state == 0 && s == Disabled {
		p.state = s // no change to report when created
		p.pubState.Store(uint32(s))
	} else {
		p.setState(s)
	}
	p.tcAck, p.configPending, p.changeDetection = false, false, true
	p.aux = nil
	p.messageAge.stop()
	p.fwdDelay.stop()
	p.hold.stop()
	p.tx, p.rx, p.errs = 0, 0, 0
}

func (p *Port) messageAgeExpiry() {
	b := p.b
	root := b.isRoot()
	b.log.Debug(fmt.Sprintf("bridge: %s, port: %s, message age timer expired", b.name, p.name))
	p.becomeDesignated()
	b.configurationUpdate()
	b.portStateSelection()
	if b.isRoot() && !root {
		b.becomeRoot()
	}
}

func (p *Port) fwdDelayExpiry() {
	switch p.state {
	case Listening:
		p.setState(Learning)
		p.fwdDelay.start(0)
	case Learning:
		p.setState(Forwarding)
		if p.b.designatedForSomePort() && p.changeDetection {
			p.b.topologyChangeDetection()
		}
	}
}

func (p *Port) transmitConfig() {
	b := p.b
	root := b.isRoot()
	if !root && b.root == nil {
		return
	}
	if p.hold.active {
		b.log.Debug(fmt.Sprintf("bridge: %s, port: %s, transmit config bpdu pending", b.name, p.name))
		p.configPending = true
		return
	}
	d := BPDU{Type: TypeConfig, RootID: b.designatedRoot, RootPathCost: uint32(b.rootPathCost),
		BridgeID: b.bridgeID, PortID: uint16(p.id), MaxAge: uint16(b.maxAge), HelloTime: uint16(b.helloTime),
		FwdDelay: uint16(b.fwdDelay)}
	if p.tcAck {
		d.Flags |= FlagTopologyChangeAck
	}
	if b.tc {
		d.Flags |= FlagTopologyChange
	}
	if !root {
		d.MessageAge = uint16(b.root.messageAge.value + messageAgeIncrement)
	}
	if int(d.MessageAge) < b.maxAge {
		p.tcAck, p.configPending = false, false
		b.log.Debug(fmt.Sprintf("bridge: %s, port: %s, transmit config bpdu", b.name, p.name))
		p.sendBPDU(d.Encode())
		p.hold.start(0)
	}
}

func (p *Port) sendBPDU(bpdu []byte) {
	p.b.outbox = append(p.b.outbox, outFrame{no: p.no, bpdu: bpdu})
	p.tx++
}
