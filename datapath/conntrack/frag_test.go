package conntrack

import (
	"bytes"
	"encoding/binary"
	"net"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/gvs-project/gvs/datapath/packet"
)

func udp4Payload(t testing.TB, n int) []byte {
	ip := ip4(cA, cB, layers.IPProtocolUDP)
	ip.Id = 0x1234
	u := &layers.UDP{SrcPort: 1000, DstPort: 2000}
	u.SetNetworkLayerForChecksum(ip)
	return serialize(t, eth(layers.EthernetTypeIPv4), ip, u, gopacket.Payload(bytes.Repeat([]byte{0xab}, n)))
}

// fragment4 splits an IPv4 frame's payload at the given offsets.
func fragment4(frame []byte, cuts ...int) [][]byte {
	hdr, payload := frame[:34], frame[34:]
	var out [][]byte
	bounds := append(append([]int{0}, cuts...), len(payload))
	for i := 0; i+1 < len(bounds); i++ {
		f := append(append([]byte(nil), hdr...), payload[bounds[i]:bounds[i+1]]...)
		ip := f[14:]
		binary.BigEndian.PutUint16(ip[2:], uint16(20+bounds[i+1]-bounds[i]))
		fo := uint16(bounds[i] / 8)
		if i+2 < len(bounds) {
			fo |= 0x2000
		}
		binary.BigEndian.PutUint16(ip[6:], fo)
		ip[10], ip[11] = 0, 0
		binary.BigEndian.PutUint16(ip[10:], packet.Checksum(ip[:20]))
		out = append(out, f)
	}
	return out
}

func TestReassembleIPv4OutOfOrderThenTrack(t *testing.T) {
	whole := udp4Payload(t, 200)
	frags := fragment4(whole, 80, 160)
	r := NewReassembler(FragConfig{})
	out := packet.New(packet.DefaultMTUBuf)
	for _, i := range []int{2, 0} {
		if v, ps := r.Add(packet.FromBytes(frags[i]), 0, 0, out); v != FragHeld || ps != nil {
			t.Fatalf("fragment %d: verdict %d", i, v)
		}
	}
	v, ps := r.Add(packet.FromBytes(frags[1]), 0, 0, out)
	if v != FragComplete || len(ps) != 3 || r.Held() != 0 {
		t.Fatalf("verdict %d, %d packets, %d held", v, len(ps), r.Held())
	}
	if !bytes.Equal(out.Data(), whole) {
		t.Fatalf("reassembled\n got % x\nwant % x", out.Data(), whole)
	}
	tr, _ := newTracker(t)
	runPkt(t, tr, "ct(commit)", out)
	wantState(t, out, "+trk+new")
	for _, p := range ps {
		CopyCtState(p, out)
		wantState(t, p, "+trk+new")
	}
	// A fragment that reaches ct without reassembly is invalid.
	wantState(t, run(t, tr, "ct", frags[0]), "+trk+inv")
	if v, _ := r.Add(packet.FromBytes(udp4(t, cA, cB, 1, 2)), 0, 0, out); v != NotFragment {
		t.Fatalf("whole packet verdict %d", v)
	}
}

func TestReassemblyLimitsOverlapAndTimeout(t *testing.T) {
	frags := fragment4(udp4Payload(t, 200), 80, 160)
	out := packet.New(packet.DefaultMTUBuf)
	r := NewReassembler(FragConfig{MaxPackets: 2, Timeout: 10})
	r.Add(packet.FromBytes(frags[0]), 0, 0, out)
	r.Add(packet.FromBytes(frags[0]), 1, 0, out) // other zone: other datagram
	if v, ps := r.Add(packet.FromBytes(frags[1]), 2, 0, out); v != FragDropped || len(ps) != 1 {
		t.Fatalf("over limit: verdict %d", v)
	}
	if ps := r.Expire(11); len(ps) != 2 || r.Held() != 0 || r.Stats().Expired != 2 {
		t.Fatalf("expired %d, held %d", len(ps), r.Held())
	}
	// Overlap drops the whole datagram.
	r = NewReassembler(FragConfig{})
	r.Add(packet.FromBytes(frags[0]), 0, 0, out)
	overlap := fragment4(udp4Payload(t, 200), 40, 160)[1]
	if v, ps := r.Add(packet.FromBytes(overlap), 0, 0, out); v != FragDropped || len(ps) != 2 || r.Held() != 0 {
		t.Fatalf("overlap: verdict %d, %d packets", v, len(ps))
	}
}

func TestReassembleIPv6(t *testing.T) {
	ip := &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: layers.IPProtocolUDP, SrcIP: net.ParseIP("fd00::1"), DstIP: net.ParseIP("fd00::2")}
	u := &layers.UDP{SrcPort: 1000, DstPort: 2000}
	u.SetNetworkLayerForChecksum(ip)
	whole := serialize(t, eth(layers.EthernetTypeIPv6), ip, u, gopacket.Payload(bytes.Repeat([]byte{0xcd}, 150)))
	hdr, payload := whole[:54], whole[54:]
	mk := func(from, to int, more bool) []byte {
		f := append([]byte(nil), hdr...)
		f[14+6] = 44
		fh := make([]byte, 8)
		fh[0] = 17
		fo := uint16(from/8) << 3
		if more {
			fo |= 1
		}
		binary.BigEndian.PutUint16(fh[2:], fo)
		binary.BigEndian.PutUint32(fh[4:], 77)
		f = append(append(f, fh...), payload[from:to]...)
		binary.BigEndian.PutUint16(f[14+4:], uint16(8+to-from))
		return f
	}
	r := NewReassembler(FragConfig{})
	out := packet.New(packet.DefaultMTUBuf)
	r.Add(packet.FromBytes(mk(80, len(payload), false)), 0, 0, out)
	v, _ := r.Add(packet.FromBytes(mk(0, 80, true)), 0, 0, out)
	if v != FragComplete || !bytes.Equal(out.Data(), whole) {
		t.Fatalf("verdict %d\n got % x\nwant % x", v, out.Data(), whole)
	}
	tr, _ := newTracker(t)
	runPkt(t, tr, "ct(commit)", out)
	wantState(t, out, "+trk+new")
}

func FuzzReassembler(f *testing.F) {
	for _, fr := range fragment4(udp4Payload(f, 200), 80, 160) {
		f.Add(fr)
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		r := NewReassembler(FragConfig{MaxPackets: 4})
		out := packet.New(packet.DefaultMTUBuf)
		for i := 0; i < 3; i++ {
			r.Add(packet.FromBytes(frame), uint16(i&1), 0, out)
		}
		r.Expire(1 << 62)
	})
}
