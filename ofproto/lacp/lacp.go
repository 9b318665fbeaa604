package lacp

import (
	"bytes"
	"log/slog"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/gvs-project/gvs/internal/logrl"
)

// Transmit intervals in milliseconds; a partner is expired after three
// intervals without a PDU.
const (
	fastTx       = 1000
	slowTx       = 30000
	rxMultiplier = 3
)

// Clock gives the time in milliseconds (monotonic; any origin).
type Clock interface {
	Now() int64
}

// SystemClock is the process's monotonic clock.
type SystemClock struct{}

var clockStart = time.Now()

// Now returns milliseconds since the package was loaded.
func (SystemClock) Now() int64 { return int64(time.Since(clockStart) / time.Millisecond) }

// Status is a bond's LACP status (Open vSwitch's enum lacp_status).
type Status uint8

const (
	Disabled   Status = iota // no LACP on the port
	Configured               // LACP runs, no member attached
	Negotiated               // a member is attached to the aggregator
)

var statusNames = [...]string{Disabled: "off", Configured: "configured", Negotiated: "negotiated"}

func (s Status) String() string { return statusNames[s] }

// Settings are a bond's LACP settings (from the Port row).
type Settings struct {
	Name        string
	SysID       [6]byte // never zero
	SysPriority uint16
	Active      bool // else passive
	Fast        bool // lacp-time=fast
	FallbackAB  bool // lacp-fallback-ab: a defaulted member still attaches
}

// MemberSettings are one member's settings (from its Interface row).
type MemberSettings struct {
	Name         string
	PortID       uint16
	PortPriority uint16
	Key          uint16 // aggregation key; 0: the port ID
}

// MemberStats are a member's counters (lacp/show-stats, and the
// dot3adAggPortStats objects).
type MemberStats struct {
	TxPDUs, RxPDUs, RxBad, RxMarker uint32
	LinkExpired, LinkDefaulted      uint32
	CarrierChanged                  uint32
}

// memberStatus is how fresh a member's partner information is.
type memberStatus uint8

const (
	current   memberStatus = iota // a PDU arrived within the receive time
	expired                       // none for one receive time
	defaulted                     // none for longer: partner unknown
)

var memberStatusNames = [...]string{current: "current", expired: "expired", defaulted: "defaulted"}

type member struct {
	MemberSettings
	status    memberStatus
	attached  bool
	carrierUp bool
	partner   Info
	nttActor  Info  // the actor information last sent
	txAt      int64 // ms: next periodic send
	rxAt      int64 // ms: partner information goes stale
	stats     MemberStats
}

// Env is what a bond's LACP needs from its surroundings. Zero fields take
// defaults: the system clock, no logging.
type Env struct {
	Clock Clock
	// Log is the "lacp" log module.
	Log *slog.Logger
	// Changed is called (without the lock held) after Run or Process
	// changed what MayEnable or Status answer, as Open vSwitch's
	// connectivity sequence: the bond then reconsiders its members.
	Changed func()
}

// LACP is one bond's LACP (Open vSwitch's struct lacp). Its methods are
// safe for concurrent use: Process runs where packets are handled, the
// rest where the bond is configured and run.
type LACP struct {
	mu         sync.Mutex
	env        Env
	set        Settings
	members    []*member // in registration order: the first is the key member
	negotiated bool
	update     bool // the attached members must be chosen again

	rxLimit, loopLimit *logrl.Limit
}

// New returns the LACP of a bond.
func New(s Settings, env Env) *LACP {
	if env.Clock == nil {
		env.Clock = SystemClock{}
	}
	if env.Log == nil {
		env.Log = slog.New(slog.DiscardHandler)
	}
	l := &LACP{env: env, rxLimit: logrl.New(1, 5), loopLimit: logrl.New(1, 10)}
	l.Configure(s)
	return l
}

func (l *LACP) now() int64 { return l.env.Clock.Now() }

// Name is the bond's name.
func (l *LACP) Name() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.set.Name
}

// Configure applies changed bond settings.
func (l *LACP) Configure(s Settings) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s.SysID != l.set.SysID || s.SysPriority != l.set.SysPriority || s.FallbackAB != l.set.FallbackAB {
		l.update = true
	}
	l.set = s
}

// Active reports whether the bond runs LACP actively.
func (l *LACP) Active() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.set.Active
}

// Status is the bond's LACP status.
func (l *LACP) Status() Status {
	if l == nil {
		return Disabled
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.negotiated {
		return Negotiated
	}
	return Configured
}

func (l *LACP) lookup(name string) *member {
	for _, m := range l.members {
		if m.Name == name {
			return m
		}
	}
	return nil
}

// Register adds a member or applies its changed settings. A member starts
// defaulted; a new port ID, priority or key expires its partner
// information when the bond is active or negotiated.
func (l *LACP) Register(s MemberSettings) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.lookup(s.Name)
	if m == nil {
		m = &member{MemberSettings: MemberSettings{Name: s.Name}}
		l.members = append(l.members, m)
		l.setDefaulted(m)
	}
	if m.PortID != s.PortID || m.PortPriority != s.PortPriority || m.Key != s.Key {
		m.MemberSettings = s
		l.update = true
		if l.set.Active || l.negotiated {
			l.setExpired(m)
		}
	}
}

// Unregister removes a member.
func (l *LACP) Unregister(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if i := slices.IndexFunc(l.members, func(m *member) bool { return m.Name == name }); i >= 0 {
		l.members = slices.Delete(l.members, i, i+1)
		l.update = true
	}
}

// Members are the members' names in registration order.
func (l *LACP) Members() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	names := make([]string, len(l.members))
	for i, m := range l.members {
		names[i] = m.Name
	}
	return names
}

// CarrierChanged tells that a member's carrier went up or down: a current
// member (or any member of an active bond) expires.
func (l *LACP) CarrierChanged(name string, up bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.lookup(name)
	if m == nil {
		return
	}
	if m.status == current || l.set.Active {
		l.setExpired(m)
	}
	if m.carrierUp != up {
		m.carrierUp = up
		m.stats.CarrierChanged++
	}
}

// MayEnable reports whether the bond may send and receive on a member:
// attached to the aggregator and its partner in sync (or defaulted with
// lacp-fallback-ab). It is asked only while the member's carrier is up,
// so it records the carrier as up.
func (l *LACP) MayEnable(name string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.lookup(name)
	if m == nil {
		return false
	}
	m.carrierUp = true
	return l.mayEnable(m)
}

func (l *LACP) mayEnable(m *member) bool {
	return m.attached && (m.partner.State&StateSync != 0 || (l.set.FallbackAB && m.status == defaulted))
}

// IsCurrent reports whether a member has heard from its partner within
// the receive time (not defaulted).
func (l *LACP) IsCurrent(name string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.lookup(name)
	return m != nil && m.status != defaulted
}

// Process handles a Slow Protocols payload received on a member and
// reports whether the member may now be enabled (so that the caller need
// not wait for the bond to run before letting traffic through).
func (l *LACP) Process(name string, payload []byte) bool {
	l.mu.Lock()
	m := l.lookup(name)
	if m == nil {
		l.mu.Unlock()
		return false
	}
	m.stats.RxPDUs++
	pdu, err := Decode(payload)
	switch {
	case err == ErrMarker:
		m.stats.RxMarker++
		l.mu.Unlock()
		l.env.Log.Debug(l.set.Name + ": received a LACP marker PDU.")
		return false
	case err != nil:
		m.stats.RxBad++
		bond := l.set.Name
		l.mu.Unlock()
		if l.rxLimit.Allow(l.env.Log, slog.LevelWarn, l.now()) {
			l.env.Log.Warn(bond + ": received an unparsable LACP PDU.")
		}
		return false
	}
	if !m.carrierUp {
		// Some NICs report carrier late: drop the PDU and let the
		// caller look at the carrier again.
		l.mu.Unlock()
		if l.rxLimit.Allow(l.env.Log, slog.LevelInfo, l.now()) {
			l.env.Log.Info(name + ": carrier state is DOWN, dropping received LACP PDU.")
		}
		l.changed()
		return false
	}
	m.status = current
	m.rxAt = l.now() + rxMultiplier*l.txInterval()
	m.nttActor = pdu.Partner
	if m.partner != pdu.Actor {
		m.partner = pdu.Actor
		l.update = true
	}
	ok := l.mayEnable(m)
	l.mu.Unlock()
	return ok
}

func (l *LACP) txInterval() int64 {
	if l.set.Fast {
		return fastTx
	}
	return slowTx
}

func (l *LACP) changed() {
	if l.env.Changed != nil {
		l.env.Changed()
	}
}

// Run expires stale partner information, chooses the attached members
// again when something changed, and sends a PDU on each member that may
// send and whose periodic time came or whose actor information changed.
// send is called without the lock held.
func (l *LACP) Run(send func(member string, pdu *PDU)) {
	type out struct {
		member string
		pdu    PDU
	}
	var outs []out
	l.mu.Lock()
	now := l.now()
	changed := false
	for _, m := range l.members {
		if now < m.rxAt {
			continue
		}
		switch m.status {
		case current:
			l.setExpired(m)
			m.stats.LinkExpired++
			changed = true
		case expired:
			l.setDefaulted(m)
			m.stats.LinkDefaulted++
			changed = true
		}
	}
	if l.update {
		l.updateAttached()
		changed = true
	}
	for _, m := range l.members {
		if !l.mayTx(m) {
			continue
		}
		actor := l.actor(m)
		if now >= m.txAt || !txEqual(&actor, &m.nttActor) {
			m.nttActor = actor
			outs = append(outs, out{m.Name, PDU{Actor: actor, Partner: m.partner}})
			m.stats.TxPDUs++
			// The partner's timeout bit says how often it wants to hear.
			iv := int64(slowTx)
			if m.partner.State&StateTimeout != 0 {
				iv = fastTx
			}
			m.txAt = now + iv
			changed = true
		}
	}
	l.mu.Unlock()
	for i := range outs {
		send(outs[i].member, &outs[i].pdu)
	}
	if changed {
		l.changed()
	}
}

// WakeTime is when Run next has something to do (math.MaxInt64: never).
func (l *LACP) WakeTime() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := int64(math.MaxInt64)
	for _, m := range l.members {
		if l.mayTx(m) {
			t = min(t, m.txAt)
		}
		if m.status != defaulted {
			t = min(t, m.rxAt)
		}
	}
	if l.update {
		t = min(t, l.now())
	}
	return t
}

func (l *LACP) mayTx(m *member) bool {
	return m.carrierUp && (l.set.Active || m.status != defaulted)
}

// txEqual reports whether a and b differ in nothing that needs a PDU sent
// (802.1AX: port, port priority, system, system priority, key, and the
// activity, timeout, synchronization and aggregation bits).
func txEqual(a, b *Info) bool {
	const bits = StateActivity | StateTimeout | StateSync | StateAggregation
	return (a.State^b.State)&bits == 0 && a.PortID == b.PortID && a.PortPriority == b.PortPriority &&
		a.Key == b.Key && a.SysPriority == b.SysPriority && a.SysID == b.SysID
}

func (l *LACP) setDefaulted(m *member) {
	m.partner = Info{}
	m.status = defaulted
	l.update = true
}

func (l *LACP) setExpired(m *member) {
	m.status = expired
	m.partner.State |= StateTimeout
	m.partner.State &^= StateSync
	m.rxAt = l.now() + rxMultiplier*fastTx
}

// key is the bond's aggregation key: the key member's key, or its port ID.
func (l *LACP) key() uint16 {
	if len(l.members) == 0 {
		return 0
	}
	if k := l.members[0].Key; k != 0 {
		return k
	}
	return l.members[0].PortID
}

// actor is the information a member sends about itself.
func (l *LACP) actor(m *member) Info {
	var st uint8
	if l.set.Active {
		st |= StateActivity
	}
	if l.set.Fast {
		st |= StateTimeout
	}
	if m.attached {
		st |= StateSync
	}
	if m.status == defaulted {
		st |= StateDefaulted
	}
	if m.status == expired {
		st |= StateExpired
	}
	if len(l.members) > 1 {
		st |= StateAggregation
	}
	if m.attached || !l.negotiated {
		st |= StateCollecting | StateDistributing
	}
	return Info{SysPriority: l.set.SysPriority, SysID: l.set.SysID, Key: l.key(),
		PortPriority: m.PortPriority, PortID: m.PortID, State: st}
}

// priority is what ranks a member's link: the information of whichever
// system has the higher priority (lower value, then lower MAC) of the
// actor and the partner, without key and state. Lower bytes rank higher.
func (l *LACP) priority(m *member) [infoLen]byte {
	var in Info
	switch p := m.partner.SysPriority; {
	case l.set.SysPriority < p:
		in = l.actor(m)
	case p < l.set.SysPriority:
		in = m.partner
	case bytes.Compare(l.set.SysID[:], m.partner.SysID[:]) < 0:
		in = l.actor(m)
	default:
		in = m.partner
	}
	in.Key, in.State = 0, 0
	var b [infoLen]byte
	putInfo(b[:], &in)
	return b
}

// updateAttached chooses the lead member and attaches the members that
// can aggregate with it: same partner system and key, never a link that
// loops back to this bond. A current, attached member keeps the
// aggregator on its partner; the bond is negotiated when any member leads.
func (l *LACP) updateAttached() {
	l.update = false
	var lead, leadCurrent *member
	var leadPri [infoLen]byte
	leadEnable := false
	for _, m := range l.members {
		if m.status == current && m.attached {
			if pri := l.priority(m); leadCurrent == nil || bytes.Compare(pri[:], leadPri[:]) < 0 {
				leadCurrent, lead, leadPri, leadEnable = m, m, pri, true
			}
		}
	}
	for _, m := range l.members {
		m.attached = false
		if m.partner.SysID == l.set.SysID {
			if l.loopLimit.Allow(l.env.Log, slog.LevelWarn, l.now()) {
				l.env.Log.Warn("member " + m.Name + ": Loopback detected. Interface is connected to its own bond")
			}
			continue
		}
		if m.status == defaulted {
			m.attached = l.set.FallbackAB
			continue
		}
		pri := l.priority(m)
		enable := l.mayEnable(m)
		if leadCurrent == nil || m.partner.SysID == leadCurrent.partner.SysID {
			m.attached = true
		}
		if m.attached && (lead == nil || (enable && !leadEnable) ||
			(enable == leadEnable && bytes.Compare(pri[:], leadPri[:]) < 0)) {
			lead, leadEnable, leadPri = m, enable, pri
		}
	}
	l.negotiated = lead != nil
	if lead == nil {
		return
	}
	for _, m := range l.members {
		if (l.set.FallbackAB && m.status == defaulted) || m.partner.Key != lead.partner.Key || m.partner.SysID != lead.partner.SysID {
			m.attached = false
		}
	}
}
