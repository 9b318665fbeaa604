package odp_test

import (
	"testing"

	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/datapath/odp/odptest"
	"github.com/gvs-project/gvs/datapath/packet"
)

var fuzzSeeds = []string{
	"2", "drop", "", "1,2,3",
	"set(ipv4(src=1.2.3.4,dst=5.6.7.8,proto=6,tos=0,ttl=64,frag=no)),2",
	"set(ipv4(tos=0x4/0xfc,ttl=3))",
	"set(ipv6(src=::1,dst=fe80::2,label=0x12345,proto=6,tclass=0x3,hlimit=64,frag=no))",
	"set(eth(src=00:01:02:03:04:05/ff:ff:ff:00:00:00))",
	"set(tcp(dst=80/0xff00)),set(udp(src=1)),set(sctp(dst=2)),set(icmp(type=8)),set(icmpv6(code=1))",
	"set(arp(sip=1.1.1.1,op=1/0xff)),set(nd(target=::1,sll=00:00:00:00:00:01,tll=00:00:00:00:00:02))",
	"set(skb_mark(0x5/0xf)),set(skb_priority(0x3))",
	"set(tunnel(tun_id=0x5,dst=1.1.1.1,ttl=64,tp_dst=4789,flags(df|key))),2",
	"set(tunnel(tun_id=0x5,dst=1.1.1.1,flags(+key)))",
	"push_vlan(tpid=0x88a8,vid=5,pcp=3,cfi=0),pop_vlan",
	"recirc(0x1)", "hash(l4(0)),recirc(0x1)", "hash(sym_l4(5))", "trunc(100),2,3", "meter(0)",
	"clone(clone(2),3),1", "clone(drop)",
	"sample(sample=12.3%,actions(2))",
	"check_pkt_len(size=200,gt(4),le(drop))",
	"userspace(pid=2,userdata(0102030400000000),actions,tunnel_out_port=4)",
	"ct(commit,zone=5,mark=0x1/0xff,label=0x1/0xf,nat(src=10.0.0.1-10.0.0.5:100-200,random))",
	"ct_clear,ct,recirc(0x2)", "tnl_pop(3)", "tnl_push(tnl_port(4789),header(size=50,type=4,eth(dst=f8:bc:12:44:34:b6,src=aa:55:aa:55:00:00,dl_type=0x0800),ipv4(src=1.1.2.88,dst=1.1.2.92,proto=17,tos=0,ttl=64,frag=0x4000),udp(src=0,dst=4789,csum=0x0),vxlan(flags=0x8000000,vni=0x7b)),out_port(100)),1", "mac_learn(table=1)",
	"mac_learn(table=2,vlan=10,in_tagged,ports(1,2:tagged,3))",
	"push_mpls(label=1,tc=7,ttl=64,bos=1,eth_type=0x8847),set(mpls(label=2/0xff,tc=0/0,ttl=9/0xff,bos=1/0)),1,pop_mpls(eth_type=0x800),2",
	"pop_mpls(eth_type=0x8847),pop_mpls(eth_type=0x86dd),set(mpls(label=5,tc=1,ttl=2,bos=0))",
}

// FuzzParseActions checks that any text either fails to parse or parses to
// actions whose text parses back to the same text, and that executing
// them on a few packets neither panics nor leaks pool packets.
func FuzzParseActions(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	for _, tc := range odp.OVSLines() {
		f.Add(tc)
	}
	frames := [][]byte{tcpv4(f), udpv4(f), sctpFrame(f), ndFrame(f, 135, 1), tcpv4(f)[:20], {},
		withLSEs(tcpv4(f), 14, 0x8847, odp.MPLSLSE(1, 0, 2, false), odp.MPLSLSE(3, 0, 4, true)), withLSEs(tcpv4(f), 14, 0x8847)[:16]}
	f.Fuzz(func(t *testing.T, s string) {
		acts, err := odp.ParseActions(s)
		if err != nil {
			return
		}
		text := acts.String()
		again, err := odp.ParseActions(text)
		if err != nil {
			t.Fatalf("%q formatted as %q, which does not parse: %v", s, text, err)
		}
		if text2 := again.String(); text2 != text {
			t.Fatalf("%q: text %q reparsed as %q", s, text, text2)
		}
		pool := packet.NewPool(64)
		ctx := odp.NewContext(pool, &odptest.Recorder{Discard: true}, 1)
		var b packet.Batch
		var k flow.Key
		for _, fr := range frames {
			p := pool.Get()
			p.SetData(fr)
			flow.Extract(p, &k)
			b.Add(p)
		}
		odp.Execute(ctx, &b, acts)
		if pool.Free() != 64 {
			t.Fatalf("%q: pool has %d free packets after Execute, want 64", s, pool.Free())
		}
	})
}
