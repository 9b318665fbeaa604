# Scenarios sourced by gen.sh: scenario NAME FLOWS PACKET...
M1=50:54:00:00:00:01 M2=50:54:00:00:00:02
E="eth(src=$M1,dst=$M2)"
ER="eth(src=$M2,dst=$M1)"
IP4="ipv4(src=10.0.0.1,dst=10.0.0.2"
IP4R="ipv4(src=10.0.0.2,dst=10.0.0.1"
TCP4="in_port(1),$E,eth_type(0x0800),$IP4,proto=6,tos=0,ttl=64,frag=no),tcp(src=1234,dst=80),tcp_flags(syn)"
TCP4R="in_port(2),$ER,eth_type(0x0800),$IP4R,proto=6,tos=0,ttl=64,frag=no),tcp(src=80,dst=1234),tcp_flags(syn|ack)"
UDP4="in_port(1),$E,eth_type(0x0800),$IP4,proto=17,tos=0x10,ttl=64,frag=no),udp(src=5353,dst=53)"
ICMP4="in_port(1),$E,eth_type(0x0800),$IP4,proto=1,tos=0,ttl=64,frag=no),icmp(type=8,code=0)"
SCTP4="in_port(1),$E,eth_type(0x0800),$IP4,proto=132,tos=0,ttl=64,frag=no),sctp(src=3868,dst=5000)"
FRAG1="in_port(1),$E,eth_type(0x0800),$IP4,proto=17,tos=0,ttl=64,frag=first),udp(src=5353,dst=53)"
FRAG2="in_port(1),$E,eth_type(0x0800),$IP4,proto=17,tos=0,ttl=64,frag=later)"
IP6="ipv6(src=2001:db8::1,dst=2001:db8::2,label=0x12345"
TCP6="in_port(1),$E,eth_type(0x86dd),$IP6,proto=6,tclass=0,hlimit=64,frag=no),tcp(src=1234,dst=443)"
UDP6="in_port(1),$E,eth_type(0x86dd),$IP6,proto=17,tclass=0x20,hlimit=255,frag=no),udp(src=546,dst=547)"
ICMP6="in_port(1),$E,eth_type(0x86dd),$IP6,proto=58,tclass=0,hlimit=64,frag=no),icmpv6(type=128,code=0)"
NS6="in_port(1),$E,eth_type(0x86dd),ipv6(src=fe80::1,dst=ff02::1:ff00:2,label=0,proto=58,tclass=0,hlimit=255,frag=no),icmpv6(type=135,code=0),nd(target=fe80::2,sll=$M1,tll=00:00:00:00:00:00)"
NA6="in_port(1),$E,eth_type(0x86dd),ipv6(src=fe80::2,dst=fe80::1,label=0,proto=58,tclass=0,hlimit=255,frag=no),icmpv6(type=136,code=0),nd(target=fe80::2,sll=00:00:00:00:00:00,tll=$M2)"
ARPQ="in_port(1),eth(src=$M1,dst=ff:ff:ff:ff:ff:ff),eth_type(0x0806),arp(sip=10.0.0.1,tip=10.0.0.2,op=1,sha=$M1,tha=00:00:00:00:00:00)"
ARPR="in_port(2),$ER,eth_type(0x0806),arp(sip=10.0.0.2,tip=10.0.0.1,op=2,sha=$M2,tha=$M1)"
VLAN="in_port(1),$E,eth_type(0x8100),vlan(vid=10,pcp=3),encap(eth_type(0x0800),$IP4,proto=6,tos=0,ttl=64,frag=no),tcp(src=1234,dst=80))"
QINQ="in_port(1),$E,eth_type(0x88a8),vlan(vid=100,pcp=0),encap(eth_type(0x8100),vlan(vid=10,pcp=5),encap(eth_type(0x0800),$IP4,proto=17,tos=0,ttl=64,frag=no),udp(src=1,dst=2)))"
MPLS="in_port(1),$E,eth_type(0x8847),mpls(label=100,tc=3,ttl=64,bos=1)"
# An 802.3 frame with an LLC header and no SNAP: 14-byte header with a length.
LLC="5054000000025054000000010026424203000000000000000000000000000000000000000000000000000000000000000000000000000000000000"

scenario normal "actions=NORMAL" "$TCP4" "$ARPQ" "$ARPR" "$VLAN" "$TCP6" "$LLC"
scenario ip-prefix "ip,nw_dst=10.0.0.0/24,actions=output:2" "$TCP4" "$UDP6"
scenario ip-exact "tcp,nw_src=10.0.0.1,nw_dst=10.0.0.2,tp_src=1234,tp_dst=80,actions=output:2" "$TCP4"
scenario tcp-dst "tcp,tp_dst=80,actions=output:2;udp,tp_src=5353,actions=output:3;sctp,tp_dst=5000,actions=output:3" "$TCP4" "$UDP4" "$SCTP4"
scenario tcp-flags "tcp,tcp_flags=+syn-ack,actions=output:2;tcp,tcp_flags=+syn+ack,actions=output:1" "$TCP4" "$TCP4R"
scenario tos-ttl "ip,nw_tos=16,actions=output:2;ip,nw_ecn=0,nw_ttl=64,actions=output:3" "$UDP4" "$TCP4"
scenario dec-ttl "ip,actions=dec_ttl,mod_nw_tos:32,output:2" "$TCP4"
scenario icmp "icmp,icmp_type=8,icmp_code=0,actions=output:2;icmp6,icmp_type=128,actions=output:2" "$ICMP4" "$ICMP6"
scenario frag "ip,ip_frag=first,actions=output:2;ip,ip_frag=later,actions=output:3;ip,ip_frag=no,actions=drop" "$FRAG1" "$FRAG2" "$TCP4"
scenario frag-udp "udp,tp_dst=53,actions=output:2" "$FRAG1" "$FRAG2"
scenario ipv6 "ipv6,ipv6_src=2001:db8::/64,ipv6_label=0x12345,actions=output:2;ipv6,nw_tos=0x20,nw_ttl=255,actions=output:3" "$TCP6" "$UDP6"
scenario ipv6-ports "tcp6,ipv6_dst=2001:db8::2,tp_dst=443,actions=output:2;udp6,tp_src=546,actions=output:3" "$TCP6" "$UDP6"
scenario nd "icmp6,icmp_type=135,icmp_code=0,nd_target=fe80::2,nd_sll=$M1,actions=output:2;icmp6,icmp_type=136,icmp_code=0,nd_tll=$M2,actions=output:3" "$NS6" "$NA6"
scenario nd-target "icmp6,icmp_type=135,icmp_code=0,nd_target=fe80::/64,actions=output:2" "$NS6"
scenario arp "arp,arp_op=1,arp_spa=10.0.0.1,arp_tpa=10.0.0.0/24,actions=output:2;arp,arp_op=2,arp_sha=$M2,arp_tha=$M1,actions=output:1" "$ARPQ" "$ARPR"
scenario vlan-pop "dl_vlan=10,actions=pop_vlan,output:2" "$VLAN"
scenario vlan-pcp "dl_vlan_pcp=3,actions=output:2" "$VLAN"
scenario vlan-push "in_port=1,actions=push_vlan:0x8100,set_field:4196->vlan_vid,output:2" "$TCP4"
scenario vlan-any "vlan_tci=0x1000/0x1000,actions=output:2" "$VLAN" "$TCP4"
scenario qinq "dl_vlan=100,actions=output:2" "$QINQ"
scenario qinq-normal "actions=NORMAL" "$QINQ"
scenario mpls "mpls,mpls_label=100,actions=pop_mpls:0x0800,output:2;mpls,mpls_tc=3,actions=output:3" "$MPLS"
scenario mpls-ttl "mpls,actions=dec_mpls_ttl,output:2" "$MPLS"
scenario llc "dl_type=0x05ff,actions=output:2" "$LLC"
scenario pkt-mark "pkt_mark=0/0xf,actions=output:2" "$TCP4"
scenario ct "table=0,ip,actions=ct(zone=5,table=1);table=1,ip,ct_state=+trk+new,actions=ct(commit,zone=5,exec(set_field:0x3->ct_mark,set_field:0x5->ct_label)),output:2;table=1,ip,ct_state=+trk+est,actions=output:2" "$TCP4" "$TCP4" "$TCP4R"
scenario ct-fields "table=0,ip,actions=ct(zone=7,table=1);table=1,ip,ct_zone=7,ct_mark=0/0xf,ct_label=0/0xff,ct_state=+trk,actions=output:2" "$UDP4"
scenario ct-tuple "table=0,ip,actions=ct(commit,zone=1,table=1);table=1,tcp,ct_state=+trk-inv,ct_nw_src=10.0.0.1,ct_nw_proto=6,ct_tp_dst=80,actions=output:2;table=1,ip,ct_state=+trk+rpl,actions=output:1" "$TCP4" "$TCP4" "$TCP4R"
scenario ct-tuple6 "table=0,ipv6,actions=ct(commit,zone=1,table=1);table=1,tcp6,ct_state=+trk-inv,ct_ipv6_src=2001:db8::1,ct_nw_proto=6,ct_tp_src=1234,actions=output:2" "$TCP6" "$TCP6"
scenario ct-nat "table=0,ip,actions=ct(commit,zone=2,nat(src=10.1.1.1),table=1);table=1,ip,ct_state=+trk+snat,actions=output:2;table=1,ip,ct_state=+trk-snat,actions=drop" "$TCP4" "$TCP4"
scenario ct-inv "table=0,ip,actions=ct(zone=3,table=1);table=1,ip,ct_state=+inv+trk,actions=drop;table=1,ip,ct_state=-inv+trk+rel,actions=output:2;table=1,ip,ct_state=-inv+trk-rel+new,actions=output:3" "$TCP4"

# Tunnels: br0 doubles as the integration bridge; the underlay bridge ul
# owns p0 and 1.1.2.88, and the remote end is 1.1.2.92.
$VSCTL add-br ul -- set bridge ul datapath_type=dummy other-config:hwaddr=aa:55:aa:55:00:00 \
	-- add-port ul p0 -- set interface p0 type=dummy ofport_request=1 \
	-- add-port br0 vx0 -- set interface vx0 type=vxlan options:remote_ip=1.1.2.92 options:key=123 ofport_request=10 \
	-- add-port br0 vx1 -- set interface vx1 type=vxlan options:remote_ip=flow options:key=flow options:exts=gbp options:dst_port=4790 ofport_request=11 \
	-- add-port br0 gnv0 -- set interface gnv0 type=geneve options:remote_ip=1.1.2.93 options:key=flow options:csum=true ofport_request=12
$APPCTL netdev-dummy/ip4addr ul 1.1.2.88/24 >/dev/null
$APPCTL ovs/route/add 1.1.2.92/24 ul >/dev/null
$OFCTL add-flow "unix:$D/ul.mgmt" actions=NORMAL

# encap KIND VNI [GBP|OPTS] SRC: hex of an Ethernet/IPv4/UDP tunnel packet
# to aa:55:aa:55:00:00 carrying an inner ICMP echo.
encap() {
	python3 - "$@" <<'PY'
import struct, sys
kind, vni, extra, src = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
inner = bytes.fromhex("505400000002505400000001" "0800")
ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 28, 0, 0, 64, 1, 0, bytes([10,0,0,1]), bytes([10,0,0,2]))
inner += ip + bytes.fromhex("0800f7ff00000000")
if kind == "vxlan":
    gbp = int(extra, 0)
    flags = 0x08 | (0x80 if gbp else 0)
    hdr = struct.pack("!BBHI", flags, (gbp >> 16) & 0xff, gbp & 0xffff, vni << 8)
    dport = 4790 if gbp else 4789
else:
    opts = bytes.fromhex(extra)
    hdr = struct.pack("!BBHI", len(opts) // 4, 0, 0x6558, vni << 8) + opts
    dport = 6081
udp = struct.pack("!HHHH", 51283, dport, 8 + len(hdr) + len(inner), 0) + hdr + inner
def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16: s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff
sip = bytes(int(x) for x in src.split("."))
hdr4 = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0x4000, 64, 17, 0, sip, bytes([1,1,2,88]))
hdr4 = hdr4[:10] + struct.pack("!H", csum(hdr4)) + hdr4[12:]
eth = bytes.fromhex("aa55aa550000f8bc124434b60800")
print((eth + hdr4 + udp).hex())
PY
}
VX=$(encap vxlan 123 0 1.1.2.92)
GNV=$(encap geneve 77 ffff80010a0b0c0d01020002deadbeef00000000 1.1.2.93)
GNV0=$(encap geneve 88 "" 1.1.2.93)
scenario vxlan "in_port=10,actions=output:2;in_port=11,tun_id=123,actions=output:3" "p0:$VX"
scenario geneve "in_port=12,tun_id=77,tun_flags=-oam,actions=output:2;in_port=12,tun_id=88,ip,actions=output:3" "p0:$GNV" "p0:$GNV0"
scenario tunnel-fields "tun_src=1.1.2.92,tun_dst=1.1.2.88,icmp,actions=output:2;in_port=12,actions=output:3" "p0:$VX" "p0:$GNV"
