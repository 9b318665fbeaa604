package bond

import (
	"encoding/binary"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sync"

	"github.com/gvs-project/gvs/internal/logrl"
	"github.com/gvs-project/gvs/internal/ovshash"
	"github.com/gvs-project/gvs/ofproto/lacp"
)

// Buckets is the number of hash buckets of a balanced bond.
const Buckets = 256

// Mode is a bond's balancing mode.
type Mode uint8

const (
	BalanceTCP   Mode = iota // by L3/L4 5-tuple; needs LACP
	BalanceSLB               // by source MAC and VLAN
	ActiveBackup             // one active member
)

var modeNames = [...]string{BalanceTCP: "balance-tcp", BalanceSLB: "balance-slb", ActiveBackup: "active-backup"}

func (m Mode) String() string { return modeNames[m] }

// ParseMode reads a bond_mode value.
func ParseMode(s string) (Mode, bool) {
	i := slices.Index(modeNames[:], s)
	return Mode(i), i >= 0
}

// Settings are a bond's settings (from its Port row).
type Settings struct {
	Name              string
	Basis             uint32 // bond-hash-basis
	Mode              Mode
	RebalanceInterval int64  // ms; 0: never
	Primary           string // bond-primary ("" none)
	UpDelay           int64  // ms
	DownDelay         int64  // ms
	LACPFallbackAB    bool
	ActiveMemberMAC   [6]byte // Port.bond_active_slave: the last active member
	UseLBOutput       bool
	AllMembersActive  bool // balance-slb only: multicast accepted on every member
}

// Verdict is Admit's answer for a received packet.
type Verdict uint8

const (
	Accept      Verdict = iota
	Drop                // never for this member
	DropIfMoved         // drop when the source MAC was learned elsewhere
)

// Clock gives the time in milliseconds (monotonic; any origin).
type Clock interface{ Now() int64 }

// Env is what a bond needs from its surroundings.
type Env struct {
	Clock Clock
	Log   *slog.Logger // the "bond" log module
	// AllocRecirc and FreeRecirc manage the recirculation ID a balanced
	// bond holds (shown by bond/show and bond/list); nil: IDs count from 1.
	AllocRecirc func() uint32
	FreeRecirc  func(uint32)
}

const never = math.MaxInt64

type member struct {
	name         string
	ofport       uint16
	mac          [6]byte
	carrier      bool
	mayEnable    bool
	enabled      bool
	primary      bool
	delayExpires int64 // ms; never when no up/down delay runs
	txBytes      uint64
}

type entry struct {
	member  *member
	txBytes uint64
}

// Bond is one bonded port (Open vSwitch's struct bond). Its methods are
// safe for concurrent use.
type Bond struct {
	mu         sync.Mutex
	env        Env
	set        Settings
	members    []*member // by OpenFlow port
	enabled    []*member // round-robin order for unassigned buckets
	active     *member
	activeMAC  [6]byte
	lacpStatus lacp.Status
	hash       *[Buckets]entry // nil unless balanced
	recircID   uint32
	nextRecirc uint32
	nextRebal  int64
	revalidate bool
	macChanged bool // the active member changed since ActiveMACChanged
	chosen     bool // an active member was chosen once
	// sendLearning: the active member changed or a member went down, so
	// the other side must learn again where this side's MACs are.
	sendLearning bool

	rl *logrl.Limit
}

// New returns a bond with no members.
func New(s Settings, env Env) *Bond {
	if env.Log == nil {
		env.Log = slog.New(slog.DiscardHandler)
	}
	b := &Bond{env: env, rl: logrl.New(5, 20), lacpStatus: lacp.Disabled}
	b.set.Mode = s.Mode
	b.Reconfigure(s)
	b.activeMAC = s.ActiveMemberMAC
	return b
}

func (b *Bond) now() int64 { return b.env.Clock.Now() }

// Name is the bond's (port's) name.
func (b *Bond) Name() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.set.Name
}

// Reconfigure applies changed settings and reports whether flows must be
// revalidated.
func (b *Bond) Reconfigure(s Settings) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	old := b.set
	rv := b.revalidate || old.LACPFallbackAB != s.LACPFallbackAB || old.RebalanceInterval != s.RebalanceInterval ||
		old.Mode != s.Mode || old.Basis != s.Basis || old.Primary != s.Primary || old.UseLBOutput != s.UseLBOutput
	b.revalidate = false
	if s.Mode != BalanceSLB {
		s.AllMembersActive = false
	}
	b.set = s
	for _, m := range b.members {
		m.primary = s.Primary != "" && m.name == s.Primary
	}
	if s.Mode != ActiveBackup && b.recircID == 0 {
		b.recircID = b.allocRecirc()
	} else if s.Mode == ActiveBackup && b.recircID != 0 {
		if b.env.FreeRecirc != nil {
			b.env.FreeRecirc(b.recircID)
		}
		b.recircID = 0
	}
	if s.Mode == ActiveBackup || b.hash == nil || rv {
		b.resetEntries()
	}
	return rv
}

func (b *Bond) allocRecirc() uint32 {
	if b.env.AllocRecirc != nil {
		return b.env.AllocRecirc()
	}
	b.nextRecirc++
	return b.nextRecirc
}

func (b *Bond) fallingBackToAB() bool {
	return b.set.LACPFallbackAB && b.set.Mode != ActiveBackup && b.lacpStatus == lacp.Configured
}

func (b *Bond) resetEntries() {
	if b.set.Mode != ActiveBackup && !b.fallingBackToAB() {
		b.hash = new([Buckets]entry)
		b.nextRebal = b.now() + b.set.RebalanceInterval
	} else {
		b.hash = nil
	}
}

func (b *Bond) lookup(name string) *member {
	for _, m := range b.members {
		if m.name == name {
			return m
		}
	}
	return nil
}

// Register adds a member (enabled at once if its carrier is up) or
// updates its MAC.
func (b *Bond) Register(name string, ofport uint16, mac [6]byte, carrier bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	m := b.lookup(name)
	if m == nil {
		m = &member{name: name, ofport: ofport, delayExpires: never}
		// Members in OpenFlow port order: when no rule decides, the
		// first enabled one becomes active.
		i := slices.IndexFunc(b.members, func(x *member) bool { return x.ofport > ofport })
		if i < 0 {
			i = len(b.members)
		}
		b.members = slices.Insert(b.members, i, m)
		b.revalidate = true
		m.carrier = carrier
		b.enable(m, carrier)
	}
	m.mac = mac
	m.primary = b.set.Primary != "" && name == b.set.Primary
}

// Unregister removes a member; a bond that loses its active member
// chooses another.
func (b *Bond) Unregister(name string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	m := b.lookup(name)
	if m == nil {
		return
	}
	b.revalidate = true
	b.enable(m, false)
	if b.hash != nil {
		for i := range b.hash {
			if b.hash[i].member == m {
				b.hash[i].member = nil
			}
		}
	}
	b.members = slices.DeleteFunc(b.members, func(x *member) bool { return x == m })
	if b.active == m {
		b.chooseActive()
	}
}

// SetCarrier records a member's carrier.
func (b *Bond) SetCarrier(name string, up bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if m := b.lookup(name); m != nil {
		m.carrier = up
	}
}

// SetMayEnable records whether another protocol (LACP) lets a member be
// enabled; without LACP the caller passes true.
func (b *Bond) SetMayEnable(name string, may bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if m := b.lookup(name); m != nil {
		m.mayEnable = may
	}
}

func (b *Bond) enable(m *member, on bool) {
	m.delayExpires = never
	if on == m.enabled {
		return
	}
	b.revalidate = true
	m.enabled = on
	if on {
		b.enabled = append(b.enabled, m)
	} else {
		b.sendLearning = true
		b.enabled = slices.DeleteFunc(b.enabled, func(x *member) bool { return x == m })
	}
	b.env.Log.Info(fmt.Sprintf("member %s: %s", m.name, map[bool]string{true: "enabled", false: "disabled"}[on]))
}

func (b *Bond) infoRL(msg string) {
	if b.rl.Allow(b.env.Log, slog.LevelInfo, b.now()) {
		b.env.Log.Info(msg)
	}
}

// linkStatus applies the up and down delays to a member whose carrier or
// may_enable changed.
func (b *Bond) linkStatus(m *member) {
	up := m.carrier && m.mayEnable
	if (up == m.enabled) != (m.delayExpires == never) {
		word := map[bool]string{true: "up", false: "down"}
		b.infoRL(fmt.Sprintf("member %s: link state %s", m.name, word[up]))
		if up == m.enabled {
			m.delayExpires = never
			b.infoRL(fmt.Sprintf("member %s: will not be %s", m.name, map[bool]string{true: "disabled", false: "enabled"}[up]))
		} else {
			delay := b.set.DownDelay
			if up {
				delay = b.set.UpDelay
			}
			m.delayExpires = b.now() + delay
			if delay != 0 {
				b.infoRL(fmt.Sprintf("member %s: will be %s if it stays %s for %d ms", m.name,
					map[bool]string{true: "enabled", false: "disabled"}[up], word[up], delay))
			}
		}
	}
	if b.now() >= m.delayExpires {
		b.enable(m, up)
	}
}

// Run brings the members' enabled state and the active member up to date
// with the bond's LACP status, and reports whether flows must be
// revalidated.
func (b *Bond) Run(status lacp.Status) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.lacpStatus != status {
		b.lacpStatus = status
		b.revalidate = true
		if b.fallingBackToAB() || b.hash == nil {
			b.resetEntries()
		}
	}
	var primary *member
	for _, m := range b.members {
		b.linkStatus(m)
		if b.set.Mode == ActiveBackup && m.primary && m.enabled {
			primary = m
		}
	}
	if b.active == nil || !b.active.enabled || (primary != nil && b.active != primary) {
		b.chooseActive()
	}
	rv := b.revalidate
	b.revalidate = false
	return rv
}

// WakeTime is when Run next has a delay to apply (math.MaxInt64: none).
func (b *Bond) WakeTime() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := int64(never)
	for _, m := range b.members {
		t = min(t, m.delayExpires)
	}
	if b.balanced() {
		t = min(t, b.nextRebal)
	}
	return t
}

func (b *Bond) memberByMAC(mac [6]byte) *member {
	for _, m := range b.members {
		if m.mac == mac {
			return m
		}
	}
	return nil
}

// chooseMember is the member that should be active: the enabled primary,
// else the last active member (by MAC) if enabled, else the first enabled
// member, else the member whose updelay ends first.
func (b *Bond) chooseMember() *member {
	for _, m := range b.members {
		if m.primary && m.enabled {
			return m
		}
	}
	if m := b.memberByMAC(b.activeMAC); m != nil && m.enabled {
		return m
	}
	for _, m := range b.members {
		if m.enabled {
			return m
		}
	}
	var best *member
	for _, m := range b.members {
		if m.delayExpires != never && m.mayEnable && (best == nil || m.delayExpires < best.delayExpires) {
			best = m
		}
	}
	return best
}

func (b *Bond) chooseActive() {
	old := b.active
	b.active = b.chooseMember()
	switch {
	case b.active != nil:
		b.sendLearning = true
		if b.active.enabled {
			b.infoRL(fmt.Sprintf("bond %s: active member is now %s", b.set.Name, b.active.name))
		} else {
			b.infoRL(fmt.Sprintf("bond %s: active member is now %s, skipping remaining %d ms updelay (since no member was enabled)",
				b.set.Name, b.active.name, b.active.delayExpires-b.now()))
			b.enable(b.active, true)
		}
		if b.active != old {
			b.activeChanged()
		}
	case old != nil:
		b.activeChanged()
		b.infoRL(fmt.Sprintf("bond %s: all members disabled", b.set.Name))
	}
}

func (b *Bond) activeChanged() {
	b.activeMAC = [6]byte{}
	if b.active != nil {
		b.activeMAC = b.active.mac
	}
	b.macChanged, b.chosen = true, true
	b.revalidate = true
}

// ShouldSendLearningPackets reports, once, whether the switch must now
// send a gratuitous learning packet through the bond for every MAC it
// learned elsewhere (after a failover of an active-backup or balance-slb
// bond without LACP, or one falling back to active-backup), so that the
// switches on the other side learn where they are again.
func (b *Bond) ShouldSendLearningPackets() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	may := ((b.lacpStatus == lacp.Disabled && (b.set.Mode == BalanceSLB || b.set.Mode == ActiveBackup)) ||
		(b.set.LACPFallbackAB && b.lacpStatus == lacp.Configured)) && b.active != nil
	send := b.sendLearning && may
	b.sendLearning = false
	return send
}

// LearningPacket is the gratuitous learning packet for a MAC in a VLAN (a
// RARP from it, 802.1Q-tagged when vlan is not 0) and the member it
// leaves by, as the bond would send a packet from that MAC.
func (b *Bond) LearningPacket(mac [6]byte, vlan uint16) (frame []byte, ofport uint16, ok bool) {
	_, ofport, ok = b.Output(HashMAC(mac, vlan, b.Basis()))
	if !ok {
		return nil, 0, false
	}
	return rarp(mac, vlan), ofport, true
}

// rarp is Open vSwitch's compose_rarp: a broadcast RARP request whose
// sender and target hardware addresses are mac, with the VLAN's tag.
func rarp(mac [6]byte, vlan uint16) []byte {
	bcast := [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	f := append(bcast[:], mac[:]...)
	if vlan != 0 {
		f = binary.BigEndian.AppendUint16(f, 0x8100)
		f = binary.BigEndian.AppendUint16(f, vlan&0xfff)
	}
	f = binary.BigEndian.AppendUint16(f, 0x8035) // RARP
	f = append(f, 0, 1, 0x08, 0, 6, 4, 0, 3)     // Ethernet, IPv4, 6, 4, op 3 (RARP request)
	f = append(f, mac[:]...)
	f = append(f, 0, 0, 0, 0)
	f = append(f, mac[:]...)
	return append(f, 0, 0, 0, 0)
}

// ActiveMAC returns the active member's MAC (zero when none), and false
// until the bond has chosen an active member once.
func (b *Bond) ActiveMAC() ([6]byte, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.activeMAC, b.chosen
}

// ActiveMACChanged returns the active member's MAC when it changed since
// the last call (or always with force), for Port.bond_active_slave.
func (b *Bond) ActiveMACChanged(force bool) ([6]byte, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.macChanged && !force {
		return [6]byte{}, false
	}
	b.macChanged = false
	return b.activeMAC, true
}

// Admit judges a packet received on a member with Ethernet destination
// dst. LACP bonds accept on enabled members (or ones LACP just let
// through) and drop everything while LACP is not negotiated, unless
// lacp-fallback-ab; otherwise multicast is accepted only on the active
// member (all-members-active aside), active-backup and balance-tcp (with
// fallback) accept only on the active member, and balance-slb accepts
// unless the source moved.
func (b *Bond) Admit(name string, dst [6]byte) Verdict {
	b.mu.Lock()
	defer b.mu.Unlock()
	m := b.lookup(name)
	if m == nil {
		return Drop
	}
	switch b.lacpStatus {
	case lacp.Negotiated:
		if m.enabled || m.mayEnable {
			return Accept
		}
		return Drop
	case lacp.Configured:
		if !b.set.LACPFallbackAB {
			return Drop
		}
	case lacp.Disabled:
		if b.set.Mode == BalanceTCP {
			return Drop
		}
	}
	if dst[0]&1 != 0 && b.active != m && !b.set.AllMembersActive {
		return Drop
	}
	switch b.set.Mode {
	case BalanceTCP:
		if !b.set.LACPFallbackAB {
			return Drop
		}
		fallthrough
	case ActiveBackup:
		if b.active != m {
			return Drop
		}
		return Accept
	default:
		return DropIfMoved
	}
}

// Output returns the member a packet whose bucket hash is h leaves by
// (false: drop, no member can send). Active-backup (and a balanced bond
// falling back to it) uses the active member; balance-tcp needs LACP
// negotiated; a bucket without an enabled member takes the next enabled
// member in turn.
func (b *Bond) Output(h uint32) (name string, ofport uint16, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	mode := b.set.Mode
	if b.lacpStatus == lacp.Configured {
		if !b.set.LACPFallbackAB {
			return "", 0, false
		}
		mode = ActiveBackup
	}
	var m *member
	switch {
	case mode == ActiveBackup:
		m = b.active
	case mode == BalanceTCP && b.lacpStatus != lacp.Negotiated:
	case b.hash != nil:
		e := &b.hash[h%Buckets]
		if e.member == nil || !e.member.enabled {
			e.member = b.nextEnabled()
		}
		m = e.member
	}
	if m == nil {
		return "", 0, false
	}
	return m.name, m.ofport, true
}

// nextEnabled takes enabled members in turn.
func (b *Bond) nextEnabled() *member {
	if len(b.enabled) == 0 {
		return nil
	}
	m := b.enabled[0]
	b.enabled = append(b.enabled[1:], m)
	return m
}

// Mode is the bond's configured mode.
func (b *Bond) Mode() Mode {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.set.Mode
}

// HashMAC is the balance-slb hash of a source MAC in a VLAN (Open
// vSwitch's hash_mac, also bond/hash's answer before masking).
func HashMAC(mac [6]byte, vlan uint16, basis uint32) uint32 {
	var w [8]byte
	copy(w[2:], mac[:])
	x := binary.BigEndian.Uint64(w[:]) | uint64(vlan)<<48
	return ovshash.Finish(ovshash.Add64(basis, x), 8)
}

// Basis is the bond's hash basis.
func (b *Bond) Basis() uint32 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.set.Basis
}

func (b *Bond) balanced() bool {
	return b.set.RebalanceInterval != 0 && b.set.Mode != ActiveBackup &&
		!(b.set.LACPFallbackAB && b.lacpStatus == lacp.Configured)
}

// Account adds bytes sent in bucket h to its load.
func (b *Bond) Account(h uint32, n uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.balanced() && b.hash != nil {
		b.hash[h%Buckets].txBytes += n
	}
}

// Rebalance moves buckets from the most to the least loaded enabled
// members when their loads differ by more than about 3 % and 100 kB, once
// per rebalance interval, then halves every bucket's load (a moving
// average). It reports whether any bucket moved.
func (b *Bond) Rebalance() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.balanced() || b.hash == nil || b.now() < b.nextRebal {
		return false
	}
	b.nextRebal = b.now() + b.set.RebalanceInterval
	entries := map[*member][]*entry{}
	for _, m := range b.members {
		m.txBytes = 0
	}
	sorted := make([]*entry, 0, Buckets)
	for i := range b.hash {
		sorted = append(sorted, &b.hash[i])
	}
	slices.SortStableFunc(sorted, func(x, y *entry) int {
		switch {
		case x.txBytes > y.txBytes:
			return -1
		case x.txBytes < y.txBytes:
			return 1
		}
		return 0
	})
	for _, e := range sorted {
		if e.member != nil && e.txBytes != 0 {
			e.member.txBytes += e.txBytes
			entries[e.member] = append(entries[e.member], e)
		}
	}
	var bals []*member // enabled members, most loaded first
	for _, m := range b.members {
		if m.enabled {
			bals = insertBal(bals, m)
		}
	}
	moved := false
	for len(bals) > 1 {
		from, to := bals[0], bals[len(bals)-1]
		over := from.txBytes - to.txBytes
		if over < to.txBytes>>5 || over < 100000 {
			break
		}
		mig := chooseMigrations(entries[from], from.txBytes, to.txBytes)
		if len(mig) == 0 {
			bals = bals[1:]
			continue
		}
		for _, e := range mig {
			b.shift(e, to)
			entries[from] = slices.DeleteFunc(entries[from], func(x *entry) bool { return x == e })
			bals = insertBal(slices.DeleteFunc(bals, func(x *member) bool { return x == from || x == to }), from)
			bals = insertBal(bals, to)
		}
		moved = true
	}
	for i := range b.hash {
		b.hash[i].txBytes /= 2
	}
	if moved {
		b.revalidate = true
	}
	return moved
}

// insertBal inserts m keeping bals in descending order of load, after
// members of equal load.
func insertBal(bals []*member, m *member) []*member {
	i := slices.IndexFunc(bals, func(x *member) bool { return m.txBytes > x.txBytes })
	if i < 0 {
		return append(bals, m)
	}
	return slices.Insert(bals, i, m)
}

// chooseMigrations picks, from the entries of the most loaded member
// (heaviest first), those whose move brings the two loads closer to their
// midpoint by at least a tenth of the way; none when from has a single
// entry.
func chooseMigrations(es []*entry, fromTx, toTx uint64) []*entry {
	if len(es) <= 1 {
		return nil
	}
	ideal := (fromTx+toTx)/2 - toTx
	threshold := ideal / 10
	var mig []*entry
	var delta uint64
	for _, e := range es {
		if delta+e.txBytes <= ideal {
			mig = append(mig, e)
			delta += e.txBytes
		}
		if ideal-delta < threshold {
			break
		}
	}
	if len(mig) == 0 {
		last := es[len(es)-1]
		mig, delta = []*entry{last}, last.txBytes
	}
	if low := min(fromTx-delta, toTx+delta); low > toTx && low-toTx >= threshold {
		return mig
	}
	return nil
}

func (b *Bond) shift(e *entry, to *member) {
	from := e.member
	idx := 0
	for i := range b.hash {
		if &b.hash[i] == e {
			idx = i
		}
	}
	b.env.Log.Info(fmt.Sprintf("bond %s: shift %dkB of load (with hash %d) from %s to %s (now carrying %dkB and %dkB load, respectively)",
		b.set.Name, e.txBytes/1024, idx, from.name, to.name, (from.txBytes-e.txBytes)/1024, (to.txBytes+e.txBytes)/1024))
	from.txBytes -= e.txBytes
	to.txBytes += e.txBytes
	e.member = to
}
