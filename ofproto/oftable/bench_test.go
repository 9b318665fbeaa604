package oftable_test

import (
	"encoding/binary"
	"testing"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/oftable"
)

// mixedRules returns n flow_mods over four mask shapes, as a router plus
// ACL table has them: nw_dst/32, nw_dst/24 with tcp_dst, nw_src/16 with
// nw_dst/16, and eth_dst with in_port. Every match is distinct.
func mixedRules(tb testing.TB, n int) []*oftable.FlowMod {
	ip := fv{"eth_type", be16(0x0800), nil}
	tcp := fv{"nw_proto", []byte{6}, nil}
	fms := make([]*oftable.FlowMod, 0, n)
	for i := range n {
		u := uint32(i / 4) // < 2^16: distinct within each shape
		var m mf.Match
		var pri uint16
		switch i % 4 {
		case 0:
			m, pri = match(tb, ip, fv{"ip_dst", be32(0x0a000000 | u), nil}), 32
		case 1:
			m, pri = match(tb, ip, tcp, fv{"ip_dst", be32(0x0b000000 | u<<8), be32(0xffffff00)}, fv{"tcp_dst", be16(uint16(i)), nil}), 24
		case 2:
			m, pri = match(tb, ip, fv{"ip_src", be32(u << 16), be32(0xffff0000)}, fv{"ip_dst", be32(0x0c000000 | (u&0xff)<<16), be32(0xffff0000)}), 16
		default:
			mac := binary.BigEndian.AppendUint64(nil, uint64(i))[2:]
			m, pri = match(tb, fv{"eth_dst", mac, nil}, fv{"in_port", be16(uint16(1 + i%7)), nil}), 8
		}
		fms = append(fms, add(m, pri, uint64(i), output(uint32(1+i%5))))
	}
	return fms
}

func BenchmarkOftableAdd100k(b *testing.B) {
	fms := mixedRules(b, 100_000)
	b.ReportAllocs()
	for b.Loop() {
		tb := newTables(b, newClock())
		apply(b, tb, fms...)
		if tb.Count() != len(fms) {
			b.Fatalf("count %d", tb.Count())
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(fms)), "ns/flow")
}

func BenchmarkClassifierLookup100kMixed(b *testing.B) {
	tb := newTables(b, newClock())
	fms := mixedRules(b, 100_000)
	apply(b, tb, fms...)
	// Packets that hit rules of each shape, and one that misses.
	flows := make([]*mf.Flow, 0, 5)
	const j = 1000 // rules 4000-4003
	for shape := range 3 {
		var f mf.Flow
		f.EthType = 0x0800
		switch shape {
		case 0:
			f.NwDst = 0x0a000000 | j
		case 1:
			f.NwProto, f.NwDst, f.TpDst = 6, 0x0b000000|j<<8|7, 4001
		case 2:
			f.NwSrc, f.NwDst = j<<16|1, 0x0c000000|(j&0xff)<<16|1
		}
		flows = append(flows, &f)
	}
	var l2 mf.Flow
	l2.InPort = 1 + 4003%7
	copy(l2.EthDst[:], binary.BigEndian.AppendUint64(nil, 4003)[2:]) // eth_dst is the rule index
	var miss mf.Flow
	miss.EthType = 0x0800
	miss.NwDst = 0x0d000001
	flows = append(flows, &l2, &miss)
	v := tb.Version()
	for i, f := range flows[:4] {
		var wc mf.Flow
		if r := tb.Lookup(v, 0, f, &wc); r == nil {
			b.Fatalf("flow %d missed", i)
		}
	}
	b.ReportAllocs()
	i := 0
	var wc mf.Flow
	for b.Loop() {
		wc = mf.Flow{}
		tb.Lookup(v, 0, flows[i%len(flows)], &wc)
		i++
	}
}

// BenchmarkOftableDeleteAll100k is del-flows of 100,000 rules: one
// delete flow_mod matching everything, committed (the sweep included).
func BenchmarkOftableDeleteAll100k(b *testing.B) {
	fms := mixedRules(b, 100_000)
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		tb := newTables(b, newClock())
		apply(b, tb, fms...)
		b.StartTimer()
		apply(b, tb, cmd(ofp.FlowDelete, 0xff, mf.Match{}, 0))
		if tb.Count() != 0 {
			b.Fatalf("count %d after deleting all", tb.Count())
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(fms)), "ns/flow")
}
