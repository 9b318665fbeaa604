package bfd

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gvs-project/gvs/internal/logrl"
)

// Clock gives the time in milliseconds (monotonic; any origin).
type Clock interface {
	Now() int64
}

// newLimit is the "bfd" module's log rate limit: 20 messages a minute,
// bursts of 20.
func newLimit() *logrl.Limit { return logrl.New(20, 20) }

// SystemClock is the process's monotonic clock.
type SystemClock struct{}

var clockStart = time.Now()

// Now returns milliseconds since the package was loaded.
func (SystemClock) Now() int64 { return int64(time.Since(clockStart) / time.Millisecond) }

// Env is what a session needs from its surroundings. Zero fields take
// defaults: the system clock, math/rand, no logging, no receive counter.
type Env struct {
	Clock Clock
	// Rand returns a random integer in [0, n).
	Rand func(n int) int
	// Log is the "bfd" log module.
	Log *slog.Logger
	// RxPackets reads the interface's received packet counter (decay
	// compares it with the control packets received).
	RxPackets func() uint64
	// Changed is called (with the session's lock held: it must not call
	// back) whenever the status or forwarding may have changed, as Open
	// vSwitch's connectivity sequence.
	Changed func()
	// Dropped is called (with the lock held) for each received control
	// packet the session did not accept (gvs's bfd_rx_drop counter).
	Dropped func()
	// Limit is the module's log rate limit, Open vSwitch's
	// VLOG_RATE_LIMIT_INIT(20, 20), shared by the sessions of a Registry
	// (a session of its own when nil).
	Limit *logrl.Limit
}

// Session is one interface's BFD session (Open vSwitch's struct bfd).
// Its methods are safe for concurrent use.
type Session struct {
	mu   sync.Mutex
	env  Env
	name string
	disc uint32

	cpathDown bool
	mult      uint8
	rmtMult   uint8
	rxPackets uint64

	state, rmtState State
	diag, rmtDiag   Diag
	flags, rmtFlags uint8
	oam             bool
	rmtDisc         uint32

	localEthSrc, localEthDst, rmtEthDst [6]byte
	ipSrc, ipDst                        uint32
	udpSrc                              uint16

	// Timers in milliseconds.
	rmtMinRx, rmtMinTx   int64
	cfgMinTx, cfgMinRx   int64
	pollMinTx, pollMinRx int64
	minTx, minRx         int64
	lastTx, nextTx       int64
	detectTime           int64
	lastForwarding       bool
	forwardingOverride   int // -1 normal, 0 false, 1 true
	checkTnlKey          bool
	forwardingIfRx       bool
	forwardingIfRxDetect int64
	demandRxBFDTime      int64
	inDecay              bool
	decayMinRx           int64
	decayRxCtl           int64
	decayRxPackets       uint64
	decayDetectTime      int64
	flapCount            uint64
	statusChanged        bool
	dropped              uint64
}

// New starts a session named name (the interface) with discriminator
// disc (nonzero, unique among the switch's sessions: see Registry) and
// UDP source port udpSrc, in state down, then applies cfg as Configure.
// It returns nil when cfg does not enable BFD.
func New(name string, disc uint32, udpSrc uint16, cfg map[string]string, env Env) *Session {
	if !getBool(cfg, "enable", false) {
		return nil
	}
	if env.Clock == nil {
		env.Clock = SystemClock{}
	}
	if env.Rand == nil {
		env.Rand = rand.IntN
	}
	if env.Log == nil {
		env.Log = slog.New(slog.DiscardHandler)
	}
	if env.Limit == nil {
		env.Limit = newLimit()
	}
	s := &Session{env: env, name: name, disc: disc, udpSrc: udpSrc, forwardingOverride: -1, minTx: 1000, mult: defaultMult,
		state: StateAdminDown}
	s.mu.Lock()
	s.rxPackets = s.rxPacketsNow()
	s.setState(StateDown, DiagNone)
	s.changed()
	s.mu.Unlock()
	s.Configure(cfg)
	return s
}

// SetRxPackets gives the session its interface's new receive counter
// when the interface's device changes under it (bfd_set_netdev): decay
// and forwarding_if_rx start over from it.
func (s *Session) SetRxPackets(rx func() uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.env.RxPackets = rx
	if s.decayMinRx != 0 && s.state == StateUp {
		s.decayUpdate()
	}
	if s.forwardingIfRx && s.state == StateUp {
		s.forwardingIfRxUpdate()
	}
	s.rxPackets = s.rxPacketsNow()
}

// Name is the session's interface name.
func (s *Session) Name() string { return s.name }

// Disc is the session's local discriminator.
func (s *Session) Disc() uint32 { return s.disc }

// Enabled reports whether cfg (an Interface.bfd map) enables BFD.
func Enabled(cfg map[string]string) bool { return getBool(cfg, "enable", false) }

// getBool is Open vSwitch's smap_get_bool.
func getBool(cfg map[string]string, key string, def bool) bool {
	v := cfg[key]
	if def {
		return !strings.EqualFold(v, "false")
	}
	return strings.EqualFold(v, "true")
}

// getInt is Open vSwitch's smap_get_int: a base-10 int (leading spaces
// and a sign allowed, nothing after), else def.
func getInt(cfg map[string]string, key string, def int64) int64 {
	v, ok := cfg[key]
	if !ok {
		return def
	}
	t := strings.TrimLeft(v, " \t\n\v\f\r")
	n, err := strconv.ParseInt(t, 10, 32)
	if err != nil || t == "" {
		return def
	}
	return n
}

// parseMAC is Open vSwitch's eth_addr_from_string: six hex bytes
// separated by colons, else zero.
func parseMAC(v string) [6]byte {
	var m [6]byte
	parts := strings.Split(v, ":")
	if len(parts) != 6 {
		return [6]byte{}
	}
	for i, p := range parts {
		if p == "" || len(p) > 2 {
			return [6]byte{}
		}
		n, err := strconv.ParseUint(p, 16, 8)
		if err != nil {
			return [6]byte{}
		}
		m[i] = byte(n)
	}
	return m
}

// Configure applies an Interface.bfd map to a running session, as Open
// vSwitch's bfd_configure (the caller drops the session when Enabled
// says false).
func (s *Session) Configure(cfg map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	needPoll, minRxChanged := false, false
	oldMult := s.mult
	newMult := getInt(cfg, "mult", defaultMult)
	if newMult < 1 || newMult > 255 {
		newMult = defaultMult
	}
	s.mult = uint8(newMult)
	s.oam = getBool(cfg, "oam", false)
	s.checkTnlKey = getBool(cfg, "check_tnl_key", false)

	minTx := max(getInt(cfg, "min_tx", 100), 1)
	if s.cfgMinTx != minTx {
		s.cfgMinTx = minTx
		if s.state != StateUp || (!s.inPoll() && s.cfgMinTx < s.minTx) {
			s.minTx = s.cfgMinTx
		}
		needPoll = true
	}
	minRx := max(getInt(cfg, "min_rx", 1000), 1)
	if s.cfgMinRx != minRx {
		s.cfgMinRx = minRx
		if s.state != StateUp || (!s.inPoll() && s.cfgMinRx > s.minRx) {
			s.minRx = s.cfgMinRx
		}
		minRxChanged, needPoll = true, true
	}
	decay := getInt(cfg, "decay_min_rx", 0)
	if s.decayMinRx != decay || minRxChanged {
		if decay > 0 && decay < s.cfgMinRx {
			s.env.Log.Warn(fmt.Sprintf("%s: decay_min_rx cannot be less than %d ms", s.name, s.cfgMinRx))
			s.decayMinRx = 0
		} else {
			s.decayMinRx = decay
		}
		s.inDecay = false
		s.decayUpdate()
		needPoll = true
	}
	cpath := getBool(cfg, "cpath_down", false)
	if s.cpathDown != cpath {
		s.cpathDown = cpath
		s.setState(s.state, DiagNone)
		needPoll = true
	}
	s.localEthSrc = parseMAC(cfg["bfd_local_src_mac"])
	s.localEthDst = parseMAC(cfg["bfd_local_dst_mac"])
	s.rmtEthDst = parseMAC(cfg["bfd_remote_dst_mac"])
	s.ipSrc = s.lookupIP(cfg["bfd_src_ip"], defaultSrcIP)
	s.ipDst = s.lookupIP(cfg["bfd_dst_ip"], defaultDstIP)

	fwdIfRx := getBool(cfg, "forwarding_if_rx", false)
	if s.forwardingIfRx != fwdIfRx {
		s.forwardingIfRx = fwdIfRx
		if s.state == StateUp && s.forwardingIfRx {
			s.forwardingIfRxUpdate()
		} else {
			s.forwardingIfRxDetect = 0
		}
	} else if s.state == StateUp && s.forwardingIfRx && oldMult != s.mult {
		s.forwardingIfRxUpdate()
	}
	if needPoll {
		s.poll()
	}
}

func (s *Session) lookupIP(v string, def uint32) uint32 {
	if v != "" {
		if a, err := netip.ParseAddr(v); err == nil && a.Is4() {
			b := a.As4()
			return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
		}
		if s.allow(slog.LevelError) {
			s.env.Log.Error(fmt.Sprintf("\"%s\" is not a valid IP address", v))
		}
	}
	return def
}

func (s *Session) now() int64 { return s.env.Clock.Now() }

func (s *Session) rxPacketsNow() uint64 {
	if s.env.RxPackets == nil {
		return 0
	}
	return s.env.RxPackets()
}

func (s *Session) changed() {
	s.statusChanged = true
	if s.env.Changed != nil {
		s.env.Changed()
	}
}

func (s *Session) inPoll() bool { return s.flags&FlagPoll != 0 }

// poll starts a poll sequence (RFC 5880 6.5) when the session is past
// down and none is running.
func (s *Session) poll() {
	if s.state > StateDown && !s.inPoll() && s.flags&FlagFinal == 0 {
		s.pollMinTx = s.cfgMinTx
		s.pollMinRx = s.cfgMinRx
		if s.inDecay {
			s.pollMinRx = s.decayMinRx
		}
		s.flags |= FlagPoll
		s.nextTx = 0
		if s.allow(slog.LevelInfo) {
			s.env.Log.Info(fmt.Sprintf("%s: Initiating poll sequence", s.name))
		}
	}
}

// minTxNow is bfd.DesiredMinTxInterval: at least a second while not up
// (RFC 5880 6.8.3).
func (s *Session) minTxNow() int64 {
	if s.state == StateUp {
		return s.minTx
	}
	return max(s.minTx, 1000)
}

func (s *Session) txInterval() int64 { return max(s.minTxNow(), s.rmtMinRx) }
func (s *Session) rxInterval() int64 { return max(s.minRx, s.rmtMinTx) }

// setNextTx schedules the next transmission with Open vSwitch's jitter:
// 0-25 % early, 10-25 % with a multiplier of 1.
func (s *Session) setNextTx() {
	iv := s.txInterval()
	if s.mult == 1 {
		iv -= iv * int64(10+s.env.Rand(16)) / 100
	} else {
		iv -= iv * int64(s.env.Rand(26)) / 100
	}
	s.nextTx = s.lastTx + iv
}

func (s *Session) setState(state State, diag Diag) {
	if s.cpathDown {
		diag = DiagCPathDown
	}
	if s.state == state && s.diag == diag {
		return
	}
	if s.allow(slog.LevelInfo) {
		s.env.Log.Info(fmt.Sprintf("%s: BFD state change: %s->%s \"%s\"->\"%s\".\n%s", s.name, s.state, state, s.diag, diag,
			strings.TrimSuffix(s.details(), "\n")))
	}
	s.state, s.diag = state, diag
	if s.state <= StateDown {
		s.rmtState, s.rmtDiag = StateDown, DiagNone
		s.rmtMinRx, s.rmtFlags, s.rmtDisc, s.rmtMinTx = 1, 0, 0, 0
		if s.inDecay {
			s.minRx = s.cfgMinRx
			s.inDecay = false
		}
	}
	if s.state == StateUp && s.decayMinRx != 0 {
		s.decayUpdate()
	}
	s.changed()
}

// forwarding is bfd_forwarding__: the decision, counting a flap when it
// changes (unless overridden).
func (s *Session) forwarding() bool {
	if s.forwardingOverride != -1 {
		return s.forwardingOverride == 1
	}
	now := s.now()
	ifRx := s.forwardingIfRx && s.forwardingIfRxDetect > now && s.demandRxBFDTime > now
	last := s.lastForwarding
	s.lastForwarding = (s.state == StateUp || ifRx) && s.rmtDiag != DiagPathDown && s.rmtDiag != DiagCPathDown &&
		s.rmtDiag != DiagRCPathDown
	if s.lastForwarding != last {
		s.flapCount++
		s.changed()
	}
	return s.lastForwarding
}

// Forwarding reports whether the interface may forward traffic.
func (s *Session) Forwarding() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.forwarding()
}

// CheckStatusChange returns whether the status changed since the last
// call, and resets it.
func (s *Session) CheckStatusChange() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.statusChanged
	s.statusChanged = false
	return c
}

// Status is the session's Interface.bfd_status.
func (s *Session) Status() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return map[string]string{
		"forwarding":        strconv.FormatBool(s.forwarding()),
		"state":             s.state.String(),
		"diagnostic":        s.diag.String(),
		"flap_count":        strconv.FormatUint(s.flapCount, 10),
		"remote_state":      s.rmtState.String(),
		"remote_diagnostic": s.rmtDiag.String(),
	}
}

// SetForwardingOverride sets bfd/set-forwarding's override: -1 normal,
// 0 false, 1 true.
func (s *Session) SetForwardingOverride(v int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forwardingOverride = v
	s.changed()
}

// WakeTime is when Run (or a send) is next due; 0 when a Final must go
// out at once.
func (s *Session) WakeTime() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.flags&FlagFinal != 0 {
		return 0
	}
	t := s.nextTx
	if s.state > StateDown {
		t = min(t, s.detectTime)
	}
	return t
}

// Run expires the detection time, decays min_rx on a quiet link and
// starts poll sequences for timer changes (bfd_run).
func (s *Session) Run() {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	oldDecay := s.inDecay
	if s.state > StateDown && now >= s.detectTime {
		s.setState(StateDown, DiagExpired)
	}
	s.forwarding()
	if s.state == StateUp && s.decayMinRx > 0 && now >= s.decayDetectTime {
		s.tryDecay()
	}
	if s.minTx != s.cfgMinTx || (s.minRx != s.cfgMinRx && s.minRx != s.decayMinRx) || s.inDecay != oldDecay {
		s.poll()
	}
}

// ShouldSend reports whether a control packet is due.
func (s *Session) ShouldSend() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.flags&FlagFinal != 0 || s.now() >= s.nextTx
}

// PutPacket builds the next control packet with ethSrc (the port's MAC)
// as source unless bfd_local_src_mac is set, and schedules the one after.
// oam says whether a tunnel should set its OAM flag.
func (s *Session) PutPacket(ethSrc [6]byte) (frameBytes []byte, oam bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if s.nextTx != 0 {
		delay, iv := now-s.nextTx, s.txInterval()
		if delay > iv*3/2 {
			s.env.Log.Info(fmt.Sprintf("%s: long delay of %dms (expected %dms) sending BFD control message", s.name, delay, iv))
		}
	}
	src, dst := ethSrc, BFDMAC
	if s.localEthSrc != ([6]byte{}) {
		src = s.localEthSrc
	}
	if s.localEthDst != ([6]byte{}) {
		dst = s.localEthDst
	}
	m := Msg{VersDiag: Version<<versShift | uint8(s.diag), Flags: uint8(s.state) | s.flags, Mult: s.mult, Length: PacketLen,
		MyDisc: s.disc, YourDisc: s.rmtDisc}
	minTx, minRx := s.minTxNow(), s.minRx
	if s.inPoll() {
		minTx, minRx = s.pollMinTx, s.pollMinRx
	}
	m.MinTx, m.MinRx = uint32(minTx*1000), uint32(minRx*1000)
	s.flags &^= FlagFinal
	s.logMsg(slog.LevelDebug, &m, "Sending BFD Message")
	s.lastTx = s.now()
	s.setNextTx()
	return frame(src, dst, s.ipSrc, s.ipDst, s.udpSrc, &m), s.oam
}

// Flow is what ShouldProcess reads of a received packet's flow.
type Flow struct {
	DlDst       [6]byte
	DlType      uint16
	NwProto     uint8
	NwFragLater bool
	NwDst       uint32
	TpDst       uint16
	TunID       uint64
}

// Wildcards are the flow bits ShouldProcess consulted (the megaflow
// must match them).
type Wildcards struct {
	DlDst, NwProto, NwDst, TunID bool
	TpDst                        uint16
}

// ShouldProcess reports whether a flow received on the session's port is
// a BFD control packet for it (bfd_should_process_flow), adding to wc the
// bits it read.
func (s *Session) ShouldProcess(f *Flow, wc *Wildcards) bool {
	s.mu.Lock()
	rmtEthDst, ipSrc, checkKey := s.rmtEthDst, s.ipSrc, s.checkTnlKey
	s.mu.Unlock()
	if rmtEthDst != ([6]byte{}) {
		wc.DlDst = true
		if rmtEthDst != f.DlDst {
			return false
		}
	}
	if f.DlType != 0x0800 {
		return false
	}
	wc.NwProto = true
	if f.NwProto != 17 || f.NwFragLater {
		return false
	}
	if diff := uint16(DestPort) ^ f.TpDst; diff != 0 {
		// Only the most significant differing bit is needed.
		bit := uint16(0x8000)
		for diff&bit == 0 {
			bit >>= 1
		}
		wc.TpDst |= bit
		return false
	}
	wc.TpDst = 0xffff
	if ipSrc != defaultSrcIP && ipSrc != f.NwDst {
		return false
	}
	if ipSrc == f.NwDst {
		wc.NwDst = true
	}
	if checkKey {
		wc.TunID = true
		return f.TunID == 0
	}
	return true
}

// Process handles a received control packet: its IPv4 TTL and its UDP
// payload (bfd_process_packet, RFC 5880 6.8.6). Packets it cannot accept
// are logged as Open vSwitch does and counted (Dropped).
func (s *Session) Process(ttl uint8, payload []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.decayRxCtl++
	s.forwarding()
	defer s.forwarding()
	if ttl != 255 {
		s.drop()
		return
	}
	m, err := Decode(payload)
	if err != nil {
		s.drop()
		if !s.allow(slog.LevelInfo) {
			return
		}
		s.env.Log.Info(fmt.Sprintf("%s: Received too-short BFD control message (only %d bytes long, at least %d required).",
			s.name, len(payload), PacketLen))
		return
	}
	flags, rmtState := m.FlagBits(), m.State()
	s.logMsg(slog.LevelDebug, &m, "Received BFD control message")
	drop := func(why string) {
		s.drop()
		s.logMsg(slog.LevelWarn, &m, why)
	}
	if m.Version() != Version {
		drop("Incorrect version")
		return
	}
	if flags&FlagAuth != 0 {
		drop("Authenticated control message with authentication disabled")
		return
	}
	if m.Length != PacketLen {
		s.logMsg(slog.LevelWarn, &m, "Unexpected length")
		if m.Length < PacketLen {
			s.drop()
			return
		}
	}
	if m.Mult == 0 {
		drop("Zero multiplier")
		return
	}
	if flags&FlagMultipoint != 0 {
		drop("Unsupported multipoint flag")
		return
	}
	if m.MyDisc == 0 {
		drop("NULL my_disc")
		return
	}
	if m.YourDisc != 0 {
		if m.YourDisc != s.disc {
			drop("Incorrect your_disc")
			return
		}
	} else if rmtState > StateDown {
		drop("Null your_disc")
		return
	}
	if s.rmtState != rmtState {
		s.changed()
	}
	s.rmtDisc, s.rmtState, s.rmtFlags, s.rmtDiag = m.MyDisc, rmtState, flags, m.Diag()
	if flags&FlagFinal != 0 && s.inPoll() {
		s.minTx, s.minRx = s.pollMinTx, s.pollMinRx
		s.flags &^= FlagPoll
		s.logMsg(slog.LevelInfo, &m, "Poll sequence terminated")
	}
	if flags&FlagPoll != 0 {
		s.flags &^= FlagPoll
		s.flags |= FlagFinal
	}
	if s.rmtMult != m.Mult {
		s.env.Log.Info(fmt.Sprintf("Interface %s remote mult value %d changed to %d", s.name, s.rmtMult, m.Mult))
		s.rmtMult = m.Mult
	}
	rmtMinRx := max(int64(m.MinRx/1000), 1)
	if s.rmtMinRx != rmtMinRx {
		s.rmtMinRx = rmtMinRx
		if s.nextTx != 0 {
			s.setNextTx()
		}
		s.logMsg(slog.LevelInfo, &m, "New remote min_rx")
	}
	s.rmtMinTx = max(int64(m.MinTx/1000), 1)
	s.detectTime = s.rxInterval()*int64(s.rmtMult) + s.now()
	if s.state == StateAdminDown {
		if s.allow(slog.LevelDebug) {
			s.env.Log.Debug("Administratively down, dropping control message.")
		}
		return
	}
	if rmtState == StateAdminDown {
		if s.state != StateDown {
			s.setState(StateDown, DiagRmtDown)
		}
	} else {
		switch s.state {
		case StateDown:
			if rmtState == StateDown {
				s.setState(StateInit, s.diag)
			} else if rmtState == StateInit {
				s.setState(StateUp, s.diag)
			}
		case StateInit:
			if rmtState > StateDown {
				s.setState(StateUp, s.diag)
			}
		case StateUp:
			if rmtState <= StateDown {
				s.setState(StateDown, DiagRmtDown)
				s.logMsg(slog.LevelInfo, &m, "Remote signaled STATE_DOWN")
			}
		}
	}
	if s.forwardingIfRx {
		s.demandRxBFDTime = s.now() + 100*s.cfgMinRx
	}
}

// allow applies the module's log rate limit (vlog_should_drop).
func (s *Session) allow(level slog.Level) bool {
	return s.env.Limit.Allow(s.env.Log, level, s.now())
}

func (s *Session) drop() {
	s.dropped++
	if s.env.Dropped != nil {
		s.env.Dropped()
	}
}

// Dropped counts the control packets Process did not accept.
func (s *Session) Dropped() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped
}

// AccountRx tells a forwarding_if_rx session that n data packets arrived
// on its interface (bfd_account_rx).
func (s *Session) AccountRx(n uint64) {
	if n == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.forwardingIfRx {
		return
	}
	s.forwarding()
	s.forwardingIfRxUpdate()
	s.forwarding()
}

func (s *Session) forwardingIfRxUpdate() {
	incr := s.rxInterval() * int64(s.mult)
	s.forwardingIfRxDetect = max(incr, 2000) + s.now()
}

// tryDecay decays min_rx when the interface received little more than
// control packets since the last check.
func (s *Session) tryDecay() {
	diff := int64(s.rxPacketsNow() - s.decayRxPackets)
	expect := 2 * max(s.decayRxCtl, 1)
	s.inDecay = diff <= expect
	s.decayUpdate()
}

func (s *Session) decayUpdate() {
	s.decayRxPackets = s.rxPacketsNow()
	s.decayRxCtl = 0
	s.decayDetectTime = max(s.decayMinRx, 2000) + s.now()
}

// logMsg logs a message with the session's details, as Open vSwitch's
// log_msg.
func (s *Session) logMsg(level slog.Level, m *Msg, text string) {
	if !s.allow(level) {
		return
	}
	s.env.Log.Log(context.Background(), level, fmt.Sprintf("%s: %s.%s\n%s", s.name, text, m.describe(), strings.TrimSuffix(s.details(), "\n")))
}

// Show is the session's bfd/show text (without the "---- NAME ----"
// header).
func (s *Session) Show() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.details()
}

func (s *Session) details() string {
	now := s.now()
	var b strings.Builder
	fmt.Fprintf(&b, "  Forwarding: %t\n", s.forwarding())
	fmt.Fprintf(&b, "  Detect Multiplier: %d\n", s.mult)
	fmt.Fprintf(&b, "  Concatenated Path Down: %t\n", s.cpathDown)
	fmt.Fprintf(&b, "  TX Interval: Approx %dms\n", s.txInterval())
	fmt.Fprintf(&b, "  RX Interval: Approx %dms\n", s.rxInterval())
	fmt.Fprintf(&b, "  Detect Time: now %+dms\n", s.detectTime-now)
	fmt.Fprintf(&b, "  Next TX Time: now %+dms\n", s.nextTx-now)
	fmt.Fprintf(&b, "  Last TX Time: now %+dms\n", s.lastTx-now)
	b.WriteString("\n")
	fmt.Fprintf(&b, "  Local Flags: %s\n", FlagsString(s.flags))
	fmt.Fprintf(&b, "  Local Session State: %s\n", s.state)
	fmt.Fprintf(&b, "  Local Diagnostic: %s\n", s.diag)
	fmt.Fprintf(&b, "  Local Discriminator: 0x%x\n", s.disc)
	fmt.Fprintf(&b, "  Local Minimum TX Interval: %dms\n", s.minTxNow())
	fmt.Fprintf(&b, "  Local Minimum RX Interval: %dms\n", s.minRx)
	b.WriteString("\n")
	fmt.Fprintf(&b, "  Remote Flags: %s\n", FlagsString(s.rmtFlags))
	fmt.Fprintf(&b, "  Remote Session State: %s\n", s.rmtState)
	fmt.Fprintf(&b, "  Remote Diagnostic: %s\n", s.rmtDiag)
	fmt.Fprintf(&b, "  Remote Discriminator: 0x%x\n", s.rmtDisc)
	fmt.Fprintf(&b, "  Remote Minimum TX Interval: %dms\n", s.rmtMinTx)
	fmt.Fprintf(&b, "  Remote Minimum RX Interval: %dms\n", s.rmtMinRx)
	fmt.Fprintf(&b, "  Remote Detect Multiplier: %d\n", s.rmtMult)
	return b.String()
}
