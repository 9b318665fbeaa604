package conntrack

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// Entry is a snapshot of one connection for dumps.
type Entry struct {
	Orig, Reply Key // Reply as the reply packets carry it
	Mark        uint32
	Label       [16]byte
	// TCPState is the dump state name ("" for other protocols).
	TCPState string
	// Timeout is the number of seconds until expiry.
	Timeout int64
	Helper  string
}

// entryOf snapshots c.
func entryOf(c *Conn, now int64) Entry {
	e := Entry{Orig: c.nodes[0].key, Reply: c.nodes[1].key}
	e.Mark, e.Label = c.markLabel()
	c.mu.Lock()
	if e.Orig.Proto == protoTCP {
		e.TCPState = tcpDumpState(c)
	}
	c.mu.Unlock()
	e.Timeout = max(0, (c.expiry()-now)/1e9)
	switch c.helper {
	case helperFTP:
		e.Helper = "ftp"
	case helperTFTP:
		e.Helper = "tftp"
	}
	return e
}

// Dump returns a snapshot of the connections of zone (all zones if zone
// is nil), expired ones excluded. It walks each zone without locks.
func (t *Tracker) Dump(zoneID *uint16) []Entry {
	now := t.now()
	var out []Entry
	visit := func(z *zone) {
		z.forEach(func(c *Conn) bool {
			if !c.expired(now) {
				out = append(out, entryOf(c, now))
			}
			return true
		})
	}
	if zoneID != nil {
		if z := t.zones[*zoneID].Load(); z != nil {
			visit(z)
		}
		return out
	}
	for i := range t.zones {
		if z := t.zones[i].Load(); z != nil {
			visit(z)
		}
	}
	return out
}

var protoNames = map[uint8]string{
	protoICMP: "icmp", protoTCP: "tcp", protoUDP: "udp", protoICMPv6: "icmpv6",
	protoSCTP: "sctp", protoUDPLite: "udplite", protoDCCP: "dccp",
}

func addrString(a [16]byte, family uint8) string {
	if family == 4 {
		return netip.AddrFrom4([4]byte(a[:4])).String()
	}
	return netip.AddrFrom16(a).String()
}

// appendTuple formats one direction as ct_dpif_format_tuple does.
func appendTuple(b []byte, k *Key) []byte {
	b = append(b, "src="...)
	b = append(b, addrString(k.Src, k.Family)...)
	b = append(b, ",dst="...)
	b = append(b, addrString(k.Dst, k.Family)...)
	switch {
	case k.Proto == protoICMP || k.Proto == protoICMPv6:
		b = fmt.Appendf(b, ",id=%d,type=%d,code=%d", k.SrcPort, k.SrcType, k.ICMPCode)
	case hasPorts(k.Proto):
		b = fmt.Appendf(b, ",sport=%d,dport=%d", k.SrcPort, k.DstPort)
	}
	return b
}

// String formats the entry as one line of `ovs-appctl
// dpctl/dump-conntrack`.
func (e *Entry) String() string { return e.Format(false) }

// Format formats the entry; stats adds the timeout as `dump-conntrack -s`.
// The layout was checked against Open vSwitch 3.1's output.
func (e *Entry) Format(stats bool) string {
	var b []byte
	if n, ok := protoNames[e.Orig.Proto]; ok {
		b = append(b, n...)
	} else {
		b = strconv.AppendUint(b, uint64(e.Orig.Proto), 10)
	}
	b = append(b, ",orig=("...)
	b = appendTuple(b, &e.Orig)
	b = append(b, "),reply=("...)
	b = appendTuple(b, &e.Reply)
	b = append(b, ')')
	if e.Orig.Zone != 0 {
		b = fmt.Appendf(b, ",zone=%d", e.Orig.Zone)
	}
	if stats {
		b = fmt.Appendf(b, ",timeout=%d", e.Timeout)
	}
	if e.Mark != 0 {
		b = fmt.Appendf(b, ",mark=%d", e.Mark)
	}
	if e.Label != ([16]byte{}) {
		b = append(b, ",labels=0x"...)
		b = appendHexTrim(b, e.Label)
	}
	if e.TCPState != "" {
		b = append(b, ",protoinfo=(state="...)
		b = append(b, e.TCPState...)
		b = append(b, ')')
	}
	if e.Helper != "" {
		b = append(b, ",helper="...)
		b = append(b, e.Helper...)
	}
	return string(b)
}

func appendHexTrim(b []byte, v [16]byte) []byte {
	const hexd = "0123456789abcdef"
	started := false
	for i := 0; i < 32; i++ {
		d := v[i/2] >> (4 * (1 - i%2)) & 0xf
		if d == 0 && !started && i != 31 {
			continue
		}
		started = true
		b = append(b, hexd[d])
	}
	return b
}

// The texts of the dpctl commands are functions of what the Tracker
// reports (Dump, Limits), not methods of it.

// FormatDump returns the text of `ovs-appctl dpctl/dump-conntrack [-s]`
// for the connections es (a Dump): one line per connection, sorted for
// stable output, with timeouts when stats (-s).
func FormatDump(es []Entry, stats bool) string {
	lines := make([]string, len(es))
	for i := range es {
		lines[i] = es[i].Format(stats)
	}
	slices.Sort(lines)
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

// FormatStats returns the text of `ovs-appctl dpctl/ct-stats-show [-m]`
// for the connections es (a Dump), checked against Open vSwitch 3.1
// (which lists TCP, UDP and ICMP, and with -m the connections per TCP
// state).
func FormatStats(es []Entry, verbose bool) string {
	var perProto [256]int
	tcpStates := map[string]int{}
	for i := range es {
		perProto[es[i].Orig.Proto]++
		if es[i].TCPState != "" {
			tcpStates[es[i].TCPState]++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Connections Stats:\n    Total: %d\n", len(es))
	for _, p := range [...]struct {
		proto uint8
		name  string
	}{{protoTCP, "TCP"}, {protoUDP, "UDP"}, {protoICMP, "ICMP"}} {
		if perProto[p.proto] == 0 {
			continue
		}
		fmt.Fprintf(&b, "  %s: %d\n", p.name, perProto[p.proto])
		if p.proto == protoTCP && verbose {
			b.WriteString("    Conn per TCP states:\n")
			for _, s := range tcpStateNames {
				if n := tcpStates[s]; n > 0 {
					fmt.Fprintf(&b, "\t  [%s]=%d\n", s, n)
				}
			}
		}
	}
	return b.String()
}

// FormatLimits returns the text of `ovs-appctl dpctl/ct-get-limits` for
// a default limit and zone limits (as Limits returns them).
func FormatLimits(def uint32, zl []ZoneLimit) string {
	var b strings.Builder
	fmt.Fprintf(&b, "default limit=%d\n", def)
	for _, z := range zl {
		fmt.Fprintf(&b, "zone=%d,limit=%d,count=%d\n", z.Zone, z.Limit, z.Count)
	}
	return b.String()
}

// parseAddrBytes parses an IPv4 or IPv6 address (FTP EPRT) into 16 bytes.
func parseAddrBytes(b []byte) ([16]byte, error) {
	var out [16]byte
	a, err := netip.ParseAddr(string(b))
	if err != nil {
		return out, err
	}
	if a.Is4() {
		a4 := a.As4()
		copy(out[:], a4[:])
		return out, nil
	}
	return a.As16(), nil
}
