package cfm

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gvs-project/gvs/internal/logrl"
	"github.com/gvs-project/gvs/internal/ovshash"
)

// Clock gives the time in milliseconds (monotonic; any origin at or
// above zero).
type Clock interface {
	Now() int64
}

// SystemClock is the process's monotonic clock.
type SystemClock struct{}

var clockStart = time.Now()

// Now returns milliseconds since the package was loaded.
func (SystemClock) Now() int64 { return int64(time.Since(clockStart) / time.Millisecond) }

// Fault reasons, by bit (Open vSwitch's enum cfm_fault_reason).
const (
	FaultRecv = 1 << iota
	FaultRDI
	FaultMAID
	FaultLoopback
	FaultOverflow
	FaultOverride
	nFaults = iota
)

var faultNames = [nFaults]string{"recv", "rdi", "maid", "loopback", "overflow", "override"}

// FaultReasons names the reasons set in fault, in bit order.
func FaultReasons(fault int) []string {
	var out []string
	for i, n := range faultNames {
		if fault&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// maxRMPs bounds the remote maintenance points a session tracks.
const maxRMPs = 256

// healthInterval is how many fault intervals health is computed over.
const healthInterval = 6

// RandomVLAN as Settings.CCMVLAN tags each CCM with a random VLAN.
const RandomVLAN = math.MaxUint16

// Settings configure a session (Open vSwitch's struct cfm_settings).
type Settings struct {
	MPID        uint64
	Interval    int // requested transmission interval, ms
	Extended    bool
	Demand      bool
	OpUp        bool
	CCMVLAN     uint16 // 0 for none, RandomVLAN for random
	CCMPCP      uint8
	CheckTnlKey bool
}

// ParseSettings reads an interface's CFM settings as Open vSwitch's
// bridge does: mpid is Interface.cfm_mpid, otherConfig its other_config
// (cfm_interval, cfm_ccm_vlan, cfm_ccm_pcp, cfm_extended, cfm_demand,
// cfm_opstate) and flowKey whether the tunnel's key (or in_key) is
// "flow".
func ParseSettings(mpid int64, otherConfig map[string]string, flowKey bool) Settings {
	s := Settings{MPID: uint64(mpid), CheckTnlKey: flowKey}
	s.Interval = int(getInt(otherConfig, "cfm_interval", 0))
	if s.Interval <= 0 {
		s.Interval = 1000
	}
	s.CCMPCP = uint8(getInt(otherConfig, "cfm_ccm_pcp", 0))
	if v, ok := otherConfig["cfm_ccm_vlan"]; ok {
		if strings.EqualFold(v, "random") {
			s.CCMVLAN = RandomVLAN
		} else {
			s.CCMVLAN = uint16(atoi(v))
			if s.CCMVLAN == RandomVLAN {
				s.CCMVLAN = 0
			}
		}
	}
	s.Extended = strings.EqualFold(otherConfig["cfm_extended"], "true")
	s.Demand = strings.EqualFold(otherConfig["cfm_demand"], "true")
	op, ok := otherConfig["cfm_opstate"]
	s.OpUp = !ok || strings.EqualFold(op, "up")
	return s
}

// getInt is Open vSwitch's smap_get_int: a base-10 int, else def.
func getInt(m map[string]string, key string, def int64) int64 {
	v, ok := m[key]
	if !ok {
		return def
	}
	n, err := strconv.ParseInt(strings.TrimLeft(v, " \t\n\v\f\r"), 10, 32)
	if err != nil {
		return def
	}
	return n
}

// atoi is C's atoi: the leading decimal digits (with a sign), else 0.
func atoi(v string) int64 {
	v = strings.TrimLeft(v, " \t\n\v\f\r")
	end := 0
	if end < len(v) && (v[end] == '-' || v[end] == '+') {
		end++
	}
	for end < len(v) && v[end] >= '0' && v[end] <= '9' {
		end++
	}
	n, _ := strconv.ParseInt(v[:end], 10, 64)
	return n
}

// intervalMs is the transmission interval of 802.1ag's encoding.
func intervalMs(code uint8) int {
	switch code {
	case 1:
		return 3
	case 2:
		return 10
	case 3:
		return 100
	case 4:
		return 1000
	case 5:
		return 10000
	case 6:
		return 60000
	default:
		return 600000
	}
}

// intervalCode is the largest 802.1ag interval not above ms (1 when
// none is).
func intervalCode(ms int) uint8 {
	for i := uint8(7); i > 0; i-- {
		if intervalMs(i) <= ms {
			return i
		}
	}
	return 1
}

// hashMPID is Open vSwitch's hash_uint64 of an MPID.
func hashMPID(mpid uint64) uint32 { return ovshash.Finish(ovshash.Add64(0, mpid), 8) }

// Env is what a session needs from its surroundings. Zero fields take
// defaults: the system clock, no logging, no receive counter.
type Env struct {
	Clock Clock
	// Log is the "cfm" log module.
	Log *slog.Logger
	// RxPackets reads the interface's received packet counter (demand
	// mode).
	RxPackets func() uint64
	// Changed is called (with the session's lock held: it must not call
	// back) when the status changed, as Open vSwitch's connectivity
	// sequence.
	Changed func()
	// Limit is the module's log rate limit, Open vSwitch's
	// VLOG_RATE_LIMIT_INIT(20, 30), shared by a Registry's sessions.
	Limit *logrl.Limit
	// Rand16 returns a random VLAN for cfm_ccm_vlan=random.
	Rand16 func() uint16
}

func newLimit() *logrl.Limit { return logrl.New(20, 30) }

// timer expiries: expired is always past, never never comes.
const (
	expired = math.MinInt64
	never   = math.MaxInt64
)

// remoteMP is a remote maintenance point heard from.
type remoteMP struct {
	mpid      uint64
	recv      bool // a CCM arrived since the last fault check
	opUp      bool
	seq       uint32
	numHealth int
	lastRx    int64
}

// Session is one interface's maintenance point (Open vSwitch's struct
// cfm). Its methods are safe for concurrent use.
type Session struct {
	mu   sync.Mutex
	env  Env
	name string

	mpid           uint64
	demand, booted bool
	fault, rxFault int
	opUp, rmtOpUp  bool
	faultOverride  int // -1 when none
	seq            uint32
	interval       uint8 // 802.1ag code; 0 for an extended interval
	intervalMs     int
	vlan           uint16
	pcp            uint8
	maid           [MAIDLen]byte
	extended       bool
	checkTnlKey    bool

	txTimer, faultTimer, demandRxCCM int64
	rxPackets                        uint64

	rmps       map[uint64]*remoteMP
	rmpsArray  []uint64
	health     int
	healthIval int
	lastTx     int64
	flapCount  uint64
	changed    bool
}

// New creates the session of interface name; Configure must follow.
func New(name string, env Env) *Session {
	if env.Clock == nil {
		env.Clock = SystemClock{}
	}
	if env.Log == nil {
		env.Log = slog.New(slog.DiscardHandler)
	}
	if env.Limit == nil {
		env.Limit = newLimit()
	}
	if env.Rand16 == nil {
		env.Rand16 = func() uint16 { return uint16(rand.Uint32()) }
	}
	s := &Session{env: env, name: name, rmps: map[uint64]*remoteMP{}, rmtOpUp: true, faultOverride: -1, health: -1,
		maid: ovsMAID()}
	s.mu.Lock()
	s.statusChanged()
	s.mu.Unlock()
	return s
}

// Name is the session's interface name.
func (s *Session) Name() string { return s.name }

func (s *Session) now() int64 { return s.env.Clock.Now() }

func (s *Session) isExpired(t int64) bool { return t == expired || s.now() >= t }

func (s *Session) statusChanged() {
	s.changed = true
	if s.env.Changed != nil {
		s.env.Changed()
	}
}

func (s *Session) rxPacketsNow() uint64 {
	if s.env.RxPackets == nil {
		return 0
	}
	return s.env.RxPackets()
}

// SetRxPackets gives the session its interface's receive counter anew
// (the interface's device changed).
func (s *Session) SetRxPackets(rx func() uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.env.RxPackets = rx
}

// faultInterval is how often faults are checked: 3.5 transmission
// intervals, of at least 500 ms in demand mode.
func (s *Session) faultInterval() int64 {
	iv := s.intervalMs
	if s.demand {
		iv = max(iv, 500)
	}
	return int64(iv) * 7 / 2
}

// ValidMPID reports whether mpid is usable: 1..8191, or any nonzero
// value in extended mode.
func ValidMPID(extended bool, mpid uint64) bool { return mpid >= 1 && (extended || mpid <= 8191) }

// Configure applies settings (cfm_configure); it returns false, changing
// nothing, for an invalid MPID or interval (the caller then drops the
// session).
func (s *Session) Configure(st Settings) bool {
	if !ValidMPID(st.Extended, st.MPID) || st.Interval <= 0 {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mpid, s.opUp = st.MPID, st.OpUp
	code := intervalCode(st.Interval)
	ms := intervalMs(code)
	s.checkTnlKey, s.extended = st.CheckTnlKey, st.Extended
	s.vlan, s.pcp = st.CCMVLAN, st.CCMPCP&7
	if st.Extended && ms != st.Interval {
		code, ms = 0, min(st.Interval, math.MaxUint16)
	}
	if st.Extended && st.Demand {
		if !s.demand {
			s.demand = true
			s.rxPackets = s.rxPacketsNow()
		}
	} else {
		s.demand = false
	}
	if code != s.interval || ms != s.intervalMs {
		s.interval, s.intervalMs = code, ms
		s.txTimer = expired
		s.faultTimer = s.now() + s.faultInterval()
	}
	return true
}

// Run checks faults when the fault interval has passed (cfm_run).
func (s *Session) Run() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.isExpired(s.faultTimer) {
		return
	}
	now := s.now()
	oldFault, oldFlaps, oldHealth := s.fault, s.flapCount, s.health
	oldLen, oldOpUp := len(s.rmpsArray), s.rmtOpUp
	deleted, setUp, setDown := false, false, false
	s.fault, s.rxFault = s.rxFault, 0
	s.rmpsArray = s.rmpsArray[:0:0]
	if s.healthIval == healthInterval {
		switch len(s.rmps) {
		case 0:
			s.health = 0
		case 1:
			for _, r := range s.rmps {
				// 3.5 CCMs are expected per fault interval.
				s.health = min(r.numHealth*100/(healthInterval*7/2), 100)
				r.numHealth = 0
			}
		default:
			s.health = -1
		}
		s.healthIval = 0
	}
	s.healthIval++
	demandOverride := false
	if s.demand {
		rx := s.rxPacketsNow()
		demandOverride = len(s.rmps) == 1 && rx > s.rxPackets && !s.isExpired(s.demandRxCCM)
		s.rxPackets = rx
	}
	for _, id := range s.sortedRMPs() {
		r := s.rmps[id]
		if !r.recv {
			s.env.Log.Info(fmt.Sprintf("%s: Received no CCM from RMP %d in the last %dms", s.name, r.mpid, now-r.lastRx))
			if !demandOverride {
				deleted = true
				delete(s.rmps, id)
			}
			continue
		}
		r.recv = false
		if r.opUp {
			setUp = true
		} else {
			setDown = true
		}
		s.rmpsArray = append(s.rmpsArray, r.mpid)
	}
	if setDown {
		s.rmtOpUp = false
	} else if setUp {
		s.rmtOpUp = true
	}
	if len(s.rmps) == 0 {
		s.fault |= FaultRecv
	}
	if oldFault != s.fault {
		if s.env.Limit.Allow(s.env.Log, slog.LevelInfo, now) {
			s.env.Log.Info(fmt.Sprintf("%s: CFM faults changed from [%s] to [%s].", s.name,
				strings.Join(FaultReasons(oldFault), " "), strings.Join(FaultReasons(s.fault), " ")))
		}
		if oldFault == 0 || s.fault == 0 {
			s.flapCount++
		}
	}
	if oldHealth != s.health || oldOpUp != s.rmtOpUp || oldLen != len(s.rmpsArray) || deleted ||
		oldFault != s.fault || oldFlaps != s.flapCount {
		s.statusChanged()
	}
	s.booted = true
	s.faultTimer = now + s.faultInterval()
	s.env.Log.Debug(fmt.Sprintf("%s: new fault interval", s.name))
}

// sortedRMPs returns the remote MPIDs in order (Open vSwitch walks a hash
// map; one order is as good as another).
func (s *Session) sortedRMPs() []uint64 {
	ids := make([]uint64, 0, len(s.rmps))
	for id := range s.rmps {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// ShouldSend reports whether a CCM is due.
func (s *Session) ShouldSend() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.isExpired(s.txTimer)
}

// Compose builds the next CCM frame from ethSrc (the port's address) and
// schedules the one after (cfm_compose_ccm).
func (s *Session) Compose(ethSrc [6]byte) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.txTimer = now + int64(s.intervalMs)
	vlan := s.vlan
	if vlan == RandomVLAN {
		vlan = s.env.Rand16()
	}
	vlan &= 0xfff
	var tci uint16
	if vlan != 0 || s.pcp != 0 {
		tci = vlan | uint16(s.pcp)<<13
	}
	s.seq++
	m := CCM{Opcode: OpcodeCCM, TLVOffset: tlvOffset, Seq: s.seq, Flags: s.interval, MAID: s.maid}
	dst := AddrCCM
	if s.extended {
		dst = AddrCCMX
		m.MPID = uint16(hashMPID(s.mpid))
		m.MPID64 = s.mpid
		if !s.opUp {
			m.OpDown = 1
		}
	} else {
		m.MPID = uint16(s.mpid)
	}
	if s.interval == 0 {
		m.IntervalMsX = uint16(s.intervalMs)
	}
	if s.booted && len(s.rmps) == 0 {
		m.Flags |= flagRDI
	}
	if s.lastTx != 0 {
		if delay := now - s.lastTx; delay > int64(s.intervalMs)*3/2 {
			s.env.Log.Info(fmt.Sprintf("%s: long delay of %dms (expected %dms) sending CCM seq %d", s.name, delay,
				s.intervalMs, s.seq))
		}
	}
	s.lastTx = now
	return frame(dst, ethSrc, tci, &m)
}

// WakeTime is when Run or a send is next due.
func (s *Session) WakeTime() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return min(s.txTimer, s.faultTimer)
}

// Flow is what ShouldProcess reads of a received packet's flow.
type Flow struct {
	DlDst  [6]byte
	DlType uint16
	TunID  uint64
}

// Wildcards are the flow fields ShouldProcess consulted.
type Wildcards struct {
	DlDst, TunID bool
}

// ShouldProcess reports whether a flow received on the session's port is
// a CCM for it (cfm_should_process_flow), adding to wc what it read.
func (s *Session) ShouldProcess(f *Flow, wc *Wildcards) bool {
	if f.DlType != EtherType {
		return false
	}
	s.mu.Lock()
	ext, checkKey := s.extended, s.checkTnlKey
	s.mu.Unlock()
	wc.DlDst = true
	addr := AddrCCM
	if ext {
		addr = AddrCCMX
	}
	if f.DlDst != addr {
		return false
	}
	if checkKey {
		wc.TunID = true
		return f.TunID == 0
	}
	return true
}

// Process handles a received CCM frame (cfm_process_heartbeat).
func (s *Session) Process(frameBytes []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	pl, src, ok := Payload(frameBytes)
	var m CCM
	var err error
	if ok {
		m, err = Decode(pl)
	}
	if !ok || err != nil {
		s.logRL(slog.LevelInfo, fmt.Sprintf("%s: Received an unparseable 802.1ag CCM heartbeat.", s.name))
		return
	}
	if m.Opcode != OpcodeCCM {
		s.logRL(slog.LevelInfo, fmt.Sprintf("%s: Received an unsupported 802.1ag message. (opcode %d)", s.name, m.Opcode))
		return
	}
	// Unexpected intervals and MPIDs are only logged, as Open vSwitch
	// does: a fault from a crafted CCM could reshape the network.
	if m.MAID != s.maid {
		s.rxFault |= FaultMAID
		s.logRL(slog.LevelWarn, fmt.Sprintf("%s: Received unexpected remote MAID from MAC %s", s.name, macString(src)))
		return
	}
	interval := m.Flags & 7
	rdi := m.Flags&flagRDI != 0
	mpid, opDown := uint64(m.MPID), false
	if s.extended {
		mpid, opDown = m.MPID64, m.OpDown != 0
	}
	fault := 0
	if interval != s.interval {
		s.logRL(slog.LevelWarn, fmt.Sprintf("%s: received a CCM with an unexpected interval (%d) from RMP %d", s.name, interval, mpid))
	}
	if s.extended && interval == 0 && int(m.IntervalMsX) != s.intervalMs {
		s.logRL(slog.LevelWarn, fmt.Sprintf("%s: received a CCM with an unexpected extended interval (%dms) from RMP %d",
			s.name, m.IntervalMsX, mpid))
	}
	r := s.rmps[mpid]
	if r == nil {
		if len(s.rmps) < maxRMPs {
			r = &remoteMP{mpid: mpid}
			s.rmps[mpid] = r
		} else {
			fault |= FaultOverflow
			s.logRL(slog.LevelWarn, fmt.Sprintf("%s: dropped CCM with MPID %d from MAC %s", s.name, mpid, macString(src)))
		}
	}
	if rdi {
		fault |= FaultRDI
		s.env.Log.Debug(fmt.Sprintf("%s: RDI bit flagged from RMP %d", s.name, mpid))
	}
	s.env.Log.Debug(fmt.Sprintf("%s: received CCM (seq %d) (mpid %d) (interval %d) (RDI %t)", s.name, m.Seq, mpid, interval, rdi))
	if r == nil {
		return
	}
	if r.mpid == s.mpid {
		fault |= FaultLoopback
		s.logRL(slog.LevelWarn, fmt.Sprintf("%s: received CCM with local MPID %d", s.name, r.mpid))
	}
	if r.seq != 0 && m.Seq != r.seq+1 {
		s.logRL(slog.LevelWarn, fmt.Sprintf("%s: (mpid %d) detected sequence numbers which indicate possible connectivity problems (previous %d) (current %d)",
			s.name, mpid, r.seq, m.Seq))
	}
	if fault == 0 {
		r.numHealth++
		if s.demand {
			s.demandRxCCM = now + 100*int64(s.intervalMs)
		}
	}
	r.recv = true
	s.rxFault |= fault
	r.seq = m.Seq
	r.opUp = !opDown
	r.lastRx = now
}

func (s *Session) logRL(level slog.Level, msg string) {
	if s.env.Limit.Allow(s.env.Log, level, s.now()) {
		s.env.Log.Log(context.Background(), level, msg)
	}
}

func macString(m [6]byte) string {
	return fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5])
}

// CheckStatusChange returns whether the status changed since the last
// call, and resets it.
func (s *Session) CheckStatusChange() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.changed
	s.changed = false
	return c
}

func (s *Session) faultLocked() int {
	if s.faultOverride >= 0 {
		if s.faultOverride != 0 {
			return FaultOverride
		}
		return 0
	}
	return s.fault
}

// Fault returns the fault reasons in force (the override's when set).
func (s *Session) Fault() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.faultLocked()
}

// RemoteOpState is 1 when the remote end is operationally up, 0 when
// down, -1 outside extended mode (no operational state).
func (s *Session) RemoteOpState() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rmtOpLocked()
}

func (s *Session) rmtOpLocked() int {
	switch {
	case !s.extended:
		return -1
	case s.rmtOpUp:
		return 1
	}
	return 0
}

// Live reports whether CFM lets the port be used: no fault and the
// remote end not operationally down (part of Open vSwitch's
// may_enable_port).
func (s *Session) Live() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.faultLocked() == 0 && s.rmtOpLocked() != 0
}

// Status is what the Interface cfm_* columns show.
type Status struct {
	Faults        int
	RemoteOpState int // -1 when unknown
	FlapCount     uint64
	Health        int // -1 when undefined
	RemoteMPIDs   []uint64
}

// Status returns the session's status (cfm_get_status).
func (s *Session) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Status{Faults: s.faultLocked(), RemoteOpState: s.rmtOpLocked(), FlapCount: s.flapCount, Health: s.health,
		RemoteMPIDs: slices.Clone(s.rmpsArray)}
}

// SetFaultOverride sets cfm/set-fault's override: -1 normal, 0 false,
// 1 true.
func (s *Session) SetFaultOverride(v int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faultOverride = v
	s.statusChanged()
}

// untilMs is Open vSwitch's timer_msecs_until_expired.
func (s *Session) untilMs(t int64) int64 {
	switch t {
	case expired:
		return 0
	case never:
		return never
	}
	return t - s.now()
}

// Show is the session's cfm/show text, with its "---- NAME ----" header.
func (s *Session) Show() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "---- %s ----\n", s.name)
	ext, ovr := "", ""
	if s.extended {
		ext = " extended"
	}
	if s.faultOverride >= 0 {
		ovr = " fault_override"
	}
	fmt.Fprintf(&b, "MPID %d:%s%s\n", s.mpid, ext, ovr)
	if f := s.faultLocked(); f != 0 {
		fmt.Fprintf(&b, "  fault: %s\n", strings.Join(FaultReasons(f), " "))
	}
	if s.health == -1 {
		b.WriteString("  average health: undefined\n")
	} else {
		fmt.Fprintf(&b, "  average health: %d\n", s.health)
	}
	fmt.Fprintf(&b, "  opstate: %s\n", upDown(s.opUp))
	fmt.Fprintf(&b, "  remote_opstate: %s\n", upDown(s.rmtOpUp))
	fmt.Fprintf(&b, "  interval: %dms\n", s.intervalMs)
	fmt.Fprintf(&b, "  next CCM tx: %dms\n", s.untilMs(s.txTimer))
	fmt.Fprintf(&b, "  next fault check: %dms\n", s.untilMs(s.faultTimer))
	for _, id := range s.sortedRMPs() {
		r := s.rmps[id]
		fmt.Fprintf(&b, "Remote MPID %d\n", r.mpid)
		fmt.Fprintf(&b, "  recv since check: %t\n", r.recv)
		fmt.Fprintf(&b, "  opstate: %s\n", upDown(r.opUp))
	}
	return b.String()
}

func upDown(b bool) string {
	if b {
		return "up"
	}
	return "down"
}
