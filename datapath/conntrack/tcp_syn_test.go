package conntrack

import (
	"math/rand"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// tcp4Scaled is a TCP segment as Linux sends it: window and, when ws is
// not negative, the window scale option.
func tcp4Scaled(t testing.TB, src, dst string, sport, dport uint16, flags int, seq, ack uint32, win uint16, ws int) []byte {
	ip := ip4(src, dst, layers.IPProtocolTCP)
	tc := tcpLayer(sport, dport, flags, seq, ack)
	tc.Window = win
	if ws >= 0 {
		tc.Options = []layers.TCPOption{{OptionType: layers.TCPOptionKindNop}, {OptionType: layers.TCPOptionKindWindowScale, OptionLength: 3, OptionData: []byte{byte(ws)}}}
	}
	tc.SetNetworkLayerForChecksum(ip)
	return serialize(t, eth(layers.EthernetTypeIPv4), ip, tc, gopacket.Payload(nil))
}

// gatewaySYNThenSYNACK runs a connection to a floating IP through the
// ct() actions OVN's gateway router applies: the SYN goes through the
// SNAT zone (9) and then three times through the DNAT zone (3); it
// returns the SYN-ACK's ct_state.
func gatewaySYNThenSYNACK(t *testing.T, sport uint16, isnC, isnS uint32) string {
	tr, _ := newTracker(t)
	p := run(t, tr, "ct(zone=9,nat)", tcp4Scaled(t, "172.16.0.100", "172.16.0.50", sport, 8084, fSYN, isnC, 0, 64240, 7))
	runPkt(t, tr, "ct(commit,zone=3,nat(dst=10.0.0.2))", p)
	runPkt(t, tr, "ct(zone=3,nat)", p)
	runPkt(t, tr, "ct(commit,zone=3)", p)
	wantState(t, p, "+trk+new+dnat")
	q := run(t, tr, "ct(zone=3,nat)", tcp4Scaled(t, "10.0.0.2", "172.16.0.100", 8084, sport, fSYN|fACK, isnS, isnC+1, 65160, 7))
	return stateString(q.Md.CtState)
}

// A SYN seen again (a second ct() in the same zone, or a retransmission)
// must leave the windows alone: it used to set the server's window to
// [0, 64240) and a SYN-ACK whose sequence number lies just below 2^31
// (for a server ISN in 0x7f80_0000..0x7fff_ffff) was +inv, so the
// connection never opened.
func TestSYNSeenTwiceLeavesTheSYNACKInWindow(t *testing.T) {
	if got := gatewaySYNThenSYNACK(t, 35420, 0x51bfb1a6, 0x7fd7ba4b); got != "+trk+est+rpl+snat" {
		t.Fatalf("SYN-ACK ct_state %s, want +trk+est+rpl+snat", got)
	}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 2000; i++ {
		sport, isnC, isnS := uint16(32768+rng.Intn(28000)), rng.Uint32(), rng.Uint32()
		if i%2 == 0 {
			isnS = 0x7f800000 | isnS&0x7fffff
		}
		if got := gatewaySYNThenSYNACK(t, sport, isnC, isnS); got != "+trk+est+rpl+snat" {
			t.Fatalf("isnC=%#x isnS=%#x: SYN-ACK ct_state %s, want +trk+est+rpl+snat", isnC, isnS, got)
		}
	}
}

// A retransmitted SYN stays +new and keeps the connection in SYN_SENT.
func TestRetransmittedSYNIsNew(t *testing.T) {
	tr, _ := newTracker(t)
	syn := tcp4Scaled(t, cA, cB, 1234, 80, fSYN, 0x7fffff00, 0, 64240, 7)
	wantState(t, run(t, tr, "ct(commit)", syn), "+trk+new")
	wantState(t, run(t, tr, "ct(commit)", syn), "+trk+new")
	wantState(t, run(t, tr, "ct", tcp4Scaled(t, cB, cA, 80, 1234, fSYN|fACK, 0x7fd7ba4b, 0x7fffff01, 65160, 7)), "+trk+est+rpl")
}
