package odp

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/gvs-project/gvs/datapath/packet"
)

// Kind is the type of one datapath action.
type Kind uint8

// Action kinds. The zero Kind is invalid so that a zero Action is never
// mistaken for an output to port 0.
const (
	KindInvalid     Kind = iota
	KindOutput           // output to port Arg
	KindDrop             // explicit drop: stop, free the packets
	KindSet              // set(field(...)) with every subfield given
	KindSetMasked        // set(field(a=b/mask)) with some subfields masked
	KindPushVLAN         // push_vlan: Arg = TPID<<16 | TCI (TCI with VLANCFI)
	KindPopVLAN          // pop_vlan
	KindRecirc           // recirc(Arg)
	KindHash             // hash(l4(Arg)) or hash(sym_l4(Arg)); Alg says which
	KindUserspace        // userspace(pid=Arg,...): Userspace holds the rest
	KindClone            // clone(Sub)
	KindTrunc            // trunc(Arg)
	KindSample           // sample(sample=Arg/2^32-1,actions(Sub))
	KindCheckPktLen      // check_pkt_len(size=Arg,gt(Sub),le(Sub2))
	KindMeter            // meter(Arg)
	KindCt               // ct(...): Ct holds the parameters
	KindCtClear          // ct_clear
	KindMACLearn         // mac_learn(...): MACLearn holds the parameters
	KindTunnelPush       // tnl_push(...): TunnelPush holds the header
	KindTunnelPop        // tnl_pop(Arg)
	KindPushMPLS         // push_mpls: Arg = the label stack entry, EthType the MPLS Ethertype
	KindPopMPLS          // pop_mpls: EthType = the Ethertype after the pop
	numKinds
)

var kindNames = [numKinds]string{
	KindInvalid:     "invalid",
	KindOutput:      "output",
	KindDrop:        "drop",
	KindSet:         "set",
	KindSetMasked:   "set",
	KindPushVLAN:    "push_vlan",
	KindPopVLAN:     "pop_vlan",
	KindRecirc:      "recirc",
	KindHash:        "hash",
	KindUserspace:   "userspace",
	KindClone:       "clone",
	KindTrunc:       "trunc",
	KindSample:      "sample",
	KindCheckPktLen: "check_pkt_len",
	KindMeter:       "meter",
	KindCt:          "ct",
	KindCtClear:     "ct_clear",
	KindMACLearn:    "mac_learn",
	KindTunnelPush:  "tnl_push",
	KindTunnelPop:   "tnl_pop",
	KindPushMPLS:    "push_mpls",
	KindPopMPLS:     "pop_mpls",
}

// String returns the action's text name.
func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return "invalid"
}

// HashAlg selects the hash action's algorithm, as OVS_HASH_ALG_*.
type HashAlg uint8

const (
	// HashL4 hashes the 5-tuple (addresses, protocol, ports).
	HashL4 HashAlg = 0
	// HashSymL4 hashes the 5-tuple so that both directions of a
	// connection get the same value.
	HashSymL4 HashAlg = 1
)

// Action is one pre-decoded datapath action. Actions are built once per
// megaflow (by ParseActions or by the translator) and are immutable from
// then on: the executor reads them concurrently from every worker, so no
// field, and nothing a pointer field points to, may change after the
// Actions value has been handed to a datapath.
type Action struct {
	Kind Kind
	Alg  HashAlg // KindHash
	// EthType is push_mpls's MPLS Ethertype and pop_mpls's Ethertype
	// after the pop (it fits in the padding before Arg).
	EthType uint16
	// Arg is the action's main number: the port (output, tnl_pop), the
	// recirculation id, the meter id, trunc's max_len, check_pkt_len's
	// size, the hash basis, the userspace pid, the sample probability (a
	// fraction of math.MaxUint32, as OVS) and, for push_vlan,
	// TPID<<16 | TCI, for push_mpls the label stack entry.
	Arg uint32

	Set  *SetField // KindSet, KindSetMasked
	Sub  Actions   // clone, sample, check_pkt_len's gt branch
	Sub2 Actions   // check_pkt_len's le branch

	Userspace  *UserspaceParams
	Ct         *CtParams
	MACLearn   *MACLearnParams
	TunnelPush *TunnelPushParams
}

// Actions is a datapath action list. An empty list drops the packets.
type Actions []Action

// UserspaceParams are the arguments of userspace(): the upcall's netlink
// pid and opaque userdata (the translator's cookie), and whether the
// upcall carries the actions.
type UserspaceParams struct {
	Userdata    []byte
	WithActions bool
	// TunnelOutPort is the egress tunnel port (tunnel_out_port=), 0 if none.
	TunnelOutPort uint32
}

// CtParams is the ct() action's payload. Raw keeps the arguments verbatim
// (the text between the parentheses, "" for a bare "ct") and is what gets
// printed back; the typed fields are parsed from it for the conntrack
// module, in the syntax `ovs-appctl dpctl/dump-flows` prints.
type CtParams struct {
	Raw         string
	Zone        uint16
	Commit      bool
	ForceCommit bool
	// Mark/MarkMask and Label/LabelMask are the masked ct_mark and
	// ct_label to set on commit; a zero mask sets nothing. Label is
	// big-endian (Label[0] holds the most significant byte).
	Mark, MarkMask   uint32
	Label, LabelMask [16]byte
	// Helper is the ALG name (helper=ftp, helper=tftp), "" for none.
	Helper string
	// Timeout is the timeout policy name (timeout=NAME), "" for the zone's.
	Timeout string
	// NAT is the nat(...) argument, nil without nat.
	NAT *CtNAT
}

// CtNAT is ct()'s nat argument. With neither Src nor Dst set ("nat"
// alone) established connections are translated as committed and new
// ones are not translated.
type CtNAT struct {
	Src, Dst bool
	// IPv6 says the address range is IPv6. MinAddr/MaxAddr hold the
	// range in network byte order (IPv4 in the first 4 bytes); a zero
	// HasAddr means the addresses are not changed.
	IPv6             bool
	HasAddr          bool
	MinAddr, MaxAddr [16]byte
	// MinPort..MaxPort is the port range, both 0 when not given.
	MinPort, MaxPort uint16
	Persistent       bool
	Hash, Random     bool
}

// MACLearnParams are the arguments of the MAC learn-and-forward action,
// mac_learn(table=T[,vlan=V][,in_tagged][,learn_port=L][,ports(P[:tagged][:recirc=R],...)]). The
// translator resolves every VLAN semantic (access, trunk, native modes)
// into these: the datapath learns the packet's source as (VLAN, MAC) on its
// in_port in table Table, looks the destination up, and outputs to the
// learned port or floods to Ports (never back to in_port), pushing or
// popping the 802.1Q tag per output port.
type MACLearnParams struct {
	// Table identifies the bridge's MAC table.
	Table uint32
	// VLAN is the packet's VLAN after input translation (0-4095; 0 on an
	// untagged bridge).
	VLAN uint16
	// InTagged says the packet reaches the action carrying an 802.1Q
	// tag for VLAN (a trunk input); otherwise it carries none.
	InTagged bool
	// LearnPort, when not 0, is the port the source is learned on and
	// that the packet never goes back to, instead of its in_port: a
	// packet that crossed a patch port into this bridge came in through
	// the patch port, which has no datapath port of its own.
	LearnPort uint32
	// DropIfMoved drops a packet whose source is already learned on
	// another port (and learns nothing from it): the packet came in on a
	// balance-slb bond member and is most likely one of this switch's
	// own floods reflected back by the other side (Open vSwitch's
	// BV_DROP_IF_MOVED).
	DropIfMoved bool
	// Ports are the ports of VLAN, sorted by Port without duplicates:
	// the flood set, and the only ports a known destination is sent to.
	Ports []MACLearnPort
	// Raw is the verbatim argument text when parsed ("" when built in
	// code); the formatter prints the typed fields.
	Raw string
}

// MACLearnPort is one member port of a mac_learn VLAN and how packets
// leave through it: Tagged ones carry an 802.1Q tag for the VLAN, the
// others none. A port with Recirc is not a datapath port but a patch
// port's number in the MAC table: packets for it are recirculated with
// that id, whose pass continues in the peer bridge. A port with Out is a
// bond: Port is the bond's number in the MAC table and Out the datapath
// port of the member this packet leaves by (translation chose it).
type MACLearnPort struct {
	Port   uint32
	Tagged bool
	Recirc uint32
	Out    uint32
}

// Find returns the member entry of port (binary search; Ports is sorted).
func (m *MACLearnParams) Find(port uint32) (MACLearnPort, bool) {
	lo, hi := 0, len(m.Ports)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if m.Ports[mid].Port < port {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < len(m.Ports) && m.Ports[lo].Port == port {
		return m.Ports[lo], true
	}
	return MACLearnPort{}, false
}

// MACLearn returns a mac_learn action over a copy of p whose Ports are
// sorted; it reports an error for a VLAN above 4095 or a duplicate port.
func MACLearn(p MACLearnParams) (Action, error) {
	p.Ports = append([]MACLearnPort(nil), p.Ports...)
	slices.SortFunc(p.Ports, func(a, b MACLearnPort) int { return cmp.Compare(a.Port, b.Port) })
	if p.VLAN > 4095 {
		return Action{}, fmt.Errorf("odp: mac_learn: vlan %d out of range", p.VLAN)
	}
	for i := 1; i < len(p.Ports); i++ {
		if p.Ports[i].Port == p.Ports[i-1].Port {
			return Action{}, fmt.Errorf("odp: mac_learn: duplicate port %d", p.Ports[i].Port)
		}
	}
	return Action{Kind: KindMACLearn, MACLearn: &p}, nil
}

// VLANCFI in a push_vlan TCI means "tag present" (OVS convention); the
// bit is cleared in the tag that goes on the wire.
const VLANCFI = 0x1000

// Output returns an output action.
func Output(port uint32) Action { return Action{Kind: KindOutput, Arg: port} }

// Drop returns an explicit drop action (reason DropPipeline).
func Drop() Action { return Action{Kind: KindDrop} }

// DropFor returns an explicit drop action for reason (Arg): executing it
// counts the packets under the reason's coverage counter
// (Context.DropCounters), as Open vSwitch's OVS_ACTION_ATTR_DROP.
func DropFor(reason uint32) Action { return Action{Kind: KindDrop, Arg: reason} }

// Drop reasons, Open vSwitch's enum xlate_error: why translation ended in
// an explicit drop (DropPipeline: the pipeline itself dropped).
const (
	DropPipeline uint32 = iota
	DropBridgeNotFound
	DropRecursionTooDeep
	DropTooManyResubmits
	DropStackTooDeep
	DropNoRecircContext
	DropRecircConflict
	DropTooManyMPLSLabels
	DropInvalidTunnelMetadata
	DropUnsupportedPacketType
	DropCongestion
	DropForwardingDisabled
	NumDropReasons
)

// DropCounterNames are Open vSwitch's coverage counters of dropped
// packets, by reason.
var DropCounterNames = [NumDropReasons]string{
	"drop_action_of_pipeline", "drop_action_bridge_not_found", "drop_action_recursion_too_deep",
	"drop_action_too_many_resubmit", "drop_action_stack_too_deep", "drop_action_no_recirculation_context",
	"drop_action_recirculation_conflict", "drop_action_too_many_mpls_labels", "drop_action_invalid_tunnel_metadata",
	"drop_action_unsupported_packet_type", "drop_action_congestion", "drop_action_forwarding_disabled",
}

// Counter counts events (a coverage counter).
type Counter interface{ Add(n uint64) }

// Recirc returns a recirculation action.
func Recirc(id uint32) Action { return Action{Kind: KindRecirc, Arg: id} }

// PushVLAN returns a push_vlan action; tci should include VLANCFI.
func PushVLAN(tpid, tci uint16) Action {
	return Action{Kind: KindPushVLAN, Arg: uint32(tpid)<<16 | uint32(tci)}
}

// PopVLAN returns a pop_vlan action.
func PopVLAN() Action { return Action{Kind: KindPopVLAN} }

// Hash returns a hash action.
func Hash(alg HashAlg, basis uint32) Action { return Action{Kind: KindHash, Alg: alg, Arg: basis} }

// Trunc returns a trunc action.
func Trunc(maxLen uint32) Action { return Action{Kind: KindTrunc, Arg: maxLen} }

// Meter returns a meter action.
func Meter(id uint32) Action { return Action{Kind: KindMeter, Arg: id} }

// CtClear returns a ct_clear action.
func CtClear() Action { return Action{Kind: KindCtClear} }

// Clone returns a clone action over a copy of acts.
func Clone(acts Actions) Action { return Action{Kind: KindClone, Sub: acts} }

// Sample returns a sample action. probability is a fraction of
// math.MaxUint32 (0 never, math.MaxUint32 always).
func Sample(probability uint32, acts Actions) Action {
	return Action{Kind: KindSample, Arg: probability, Sub: acts}
}

// SampleProbability converts a percentage to sample's probability as OVS
// does: rounded to the nearest fraction of math.MaxUint32.
func SampleProbability(percent float64) uint32 {
	if !(percent > 0) { // also NaN
		return 0
	}
	if percent >= 100 {
		return math.MaxUint32
	}
	return uint32(math.Round(percent / 100 * math.MaxUint32))
}

// CheckPktLen returns a check_pkt_len action.
func CheckPktLen(size uint32, gt, le Actions) Action {
	return Action{Kind: KindCheckPktLen, Arg: size, Sub: gt, Sub2: le}
}

// Userspace returns a userspace action. Userdata shorter than 8 bytes is
// zero-padded to 8, as Open vSwitch does for old kernels' 64-bit cookies.
func Userspace(pid uint32, p UserspaceParams) Action {
	if n := len(p.Userdata); n > 0 && n < 8 {
		p.Userdata = append(p.Userdata[:n:n], make([]byte, 8-n)...)
	}
	return Action{Kind: KindUserspace, Arg: pid, Userspace: &p}
}

// SetTunnel returns a set(tunnel(...)) action that sets the whole tunnel
// metadata to t. It prints every non-zero field and the flags; set
// packet.TunFlagKey in t.Flags when t.ID is meaningful.
func SetTunnel(t packet.Tunnel) Action {
	f := newTunnelSet(&t)
	return Action{Kind: KindSet, Set: f}
}

// SetTunnelGeneve is SetTunnel with raw Geneve options (class, type,
// length and data of each), printed as geneve({...}) before the flags;
// options beyond packet.TunMetaBytes are cut.
func SetTunnelGeneve(t packet.Tunnel, opts []byte) Action {
	f := newTunnelSet(&t)
	f.geneveLen = uint8(copy(f.geneve[:], opts))
	return Action{Kind: KindSet, Set: f}
}
