package classifier

import (
	"encoding/binary"
	"math/bits"

	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/ofproto/mf"
)

// MaxPrefixFields is the most prefix-tracked fields a classifier keeps, as
// Open vSwitch's Flow_Table prefixes column.
const MaxPrefixFields = 3

// DefaultPrefixFields are the fields tracked when a table has no
// configuration: Open vSwitch's default "prefixes=ip_dst,ip_src".
var DefaultPrefixFields = []string{"ip_dst", "ip_src"}

// u128 is a prefix value, most significant bit first: bit 0 of a field is
// the top bit of hi. Narrower fields are left-aligned.
type u128 [2]uint64

func (v u128) bit(i int) int {
	if i < 64 {
		return int(v[0]>>(63-i)) & 1
	}
	return int(v[1]>>(127-i)) & 1
}

// prefix returns v with only its first n bits kept.
func (v u128) prefix(n int) u128 {
	switch {
	case n <= 0:
		return u128{}
	case n < 64:
		return u128{v[0] &^ (^uint64(0) >> n), 0}
	case n == 64:
		return u128{v[0], 0}
	case n < 128:
		return u128{v[0], v[1] &^ (^uint64(0) >> (n - 64))}
	}
	return v
}

// firstDiff returns the index of the first bit where a and b differ, or 128.
func firstDiff(a, b u128) int {
	if x := a[0] ^ b[0]; x != 0 {
		return bits.LeadingZeros64(x)
	}
	return 64 + bits.LeadingZeros64(a[1]^b[1])
}

// cidrLen returns n if m is n leading ones followed by zeros (n > 0), else 0.
func cidrLen(m u128, width int) int {
	n := bits.LeadingZeros64(^m[0])
	if n == 64 {
		n += bits.LeadingZeros64(^m[1])
	}
	if n > width || m != (u128{^uint64(0), ^uint64(0)}).prefix(n) {
		return 0
	}
	return n
}

// prefixField describes a field that a prefix trie can track: where its bits
// live in mf.Flow and the Ethertype its prerequisite needs (0: none).
type prefixField struct {
	name  string
	nbits int
	stage int
	// dlType is the Ethertype the field's prerequisite requires, or 0.
	dlType uint16
	get    func(f *mf.Flow) u128
	// orPrefix sets the first n bits of the field in f.
	orPrefix func(f *mf.Flow, n int)
}

func be128(b *[16]byte) u128 {
	return u128{binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])}
}

func orBytes(b *[16]byte, n int) {
	for i := 0; i < n/8; i++ {
		b[i] = 0xff
	}
	if n%8 != 0 {
		b[n/8] |= byte(0xff << (8 - n%8))
	}
}

func u32Field(name string, dlType uint16, stage int, p func(*mf.Flow) *uint32) *prefixField {
	return &prefixField{name: name, nbits: 32, stage: stage, dlType: dlType,
		get: func(f *mf.Flow) u128 { return u128{uint64(*p(f)) << 32} },
		orPrefix: func(f *mf.Flow, n int) {
			if n > 0 {
				*p(f) |= ^uint32(0) << (32 - n)
			}
		}}
}

func bytesField(name string, dlType uint16, stage int, p func(*mf.Flow) *[16]byte) *prefixField {
	return &prefixField{name: name, nbits: 128, stage: stage, dlType: dlType,
		get:      func(f *mf.Flow) u128 { return be128(p(f)) },
		orPrefix: func(f *mf.Flow, n int) { orBytes(p(f), n) }}
}

// prefixFields are the fields Open vSwitch allows in Flow_Table prefixes,
// by name and alias.
var prefixFields = func() map[string]*prefixField {
	tunID := &prefixField{name: "tun_id", nbits: 64, stage: stageMeta,
		get: func(f *mf.Flow) u128 { return u128{f.TunID} },
		orPrefix: func(f *mf.Flow, n int) {
			if n > 0 {
				f.TunID |= ^uint64(0) << (64 - n)
			}
		}}
	ipSrc := u32Field("ip_src", flow.EthTypeIPv4, stageL3, func(f *mf.Flow) *uint32 { return &f.NwSrc })
	ipDst := u32Field("ip_dst", flow.EthTypeIPv4, stageL3, func(f *mf.Flow) *uint32 { return &f.NwDst })
	return map[string]*prefixField{
		"tun_id": tunID, "tunnel_id": tunID,
		"tun_src":      u32Field("tun_src", 0, stageMeta, func(f *mf.Flow) *uint32 { return &f.TunSrc }),
		"tun_dst":      u32Field("tun_dst", 0, stageMeta, func(f *mf.Flow) *uint32 { return &f.TunDst }),
		"tun_ipv6_src": bytesField("tun_ipv6_src", 0, stageMeta, func(f *mf.Flow) *[16]byte { return &f.TunIPv6Src }),
		"tun_ipv6_dst": bytesField("tun_ipv6_dst", 0, stageMeta, func(f *mf.Flow) *[16]byte { return &f.TunIPv6Dst }),
		"ip_src":       ipSrc, "nw_src": ipSrc,
		"ip_dst": ipDst, "nw_dst": ipDst,
		"ipv6_src": bytesField("ipv6_src", flow.EthTypeIPv6, stageL3, func(f *mf.Flow) *[16]byte { return &f.IPv6Src }),
		"ipv6_dst": bytesField("ipv6_dst", flow.EthTypeIPv6, stageL3, func(f *mf.Flow) *[16]byte { return &f.IPv6Dst }),
	}
}()

// PrefixFieldName returns the canonical name of a field a prefix trie
// can track, given its name or alias ("nw_src" is "ip_src"); false for
// any other field.
func PrefixFieldName(name string) (string, bool) {
	f := prefixFields[name]
	if f == nil {
		return "", false
	}
	return f.name, true
}

// plen returns the prefix length the mask has on the field, 0 when the
// field is wildcarded or its mask is not a prefix (CIDR) mask.
func (p *prefixField) plen(mask *mf.Flow) int { return cidrLen(p.get(mask), p.nbits) }

// hasPrefix reports whether the first n bits of the field are set in mask.
func (p *prefixField) hasPrefix(mask *mf.Flow, n int) bool {
	all := u128{^uint64(0), ^uint64(0)}.prefix(n)
	m := p.get(mask)
	return m[0]&all[0] == all[0] && m[1]&all[1] == all[1]
}

// tnode is a node of a path-compressed binary trie of prefixes. Nodes are
// immutable once published: writers copy the path from the root and
// publish the new root atomically, so readers never lock. A node stores the
// whole prefix from the root (bits [0,end)), so children can be re-hung
// under a new parent without being copied.
type tnode struct {
	prefix u128
	end    int // prefix length in bits at the end of this node
	nRules int // rules whose prefix ends exactly here
	edges  [2]*tnode
}

func (n *tnode) isLeaf() bool { return n.edges[0] == nil && n.edges[1] == nil }

// trieInsert returns a trie that also counts one rule with prefix v/plen.
func trieInsert(n *tnode, v u128, plen int) *tnode {
	v = v.prefix(plen)
	if n == nil {
		return &tnode{prefix: v, end: plen, nRules: 1}
	}
	common := min(firstDiff(v, n.prefix), n.end, plen)
	if common < n.end {
		// Split: a new node for the common part, n hangs below it.
		p := &tnode{prefix: v.prefix(common), end: common}
		p.edges[n.prefix.bit(common)] = n
		if plen == common {
			p.nRules = 1
		} else {
			p.edges[v.bit(common)] = &tnode{prefix: v, end: plen, nRules: 1}
		}
		return p
	}
	c := *n
	if plen == n.end {
		c.nRules++
		return &c
	}
	b := v.bit(n.end)
	c.edges[b] = trieInsert(n.edges[b], v, plen)
	return &c
}

// trieRemove returns a trie that counts one rule fewer with prefix v/plen,
// which must be present. Empty nodes are pruned and single-child nodes
// without rules merged, so the shape depends only on the stored prefixes.
func trieRemove(n *tnode, v u128, plen int) *tnode {
	if n == nil {
		return nil
	}
	c := *n
	if plen == n.end {
		c.nRules--
	} else if plen > n.end {
		b := v.bit(n.end)
		c.edges[b] = trieRemove(n.edges[b], v, plen)
	}
	if c.nRules > 0 {
		return &c
	}
	switch {
	case c.edges[0] == nil:
		return c.edges[1]
	case c.edges[1] == nil:
		return c.edges[0]
	}
	return &c
}

// trieLookup walks the trie along v (nbits wide). It sets in plens bit L-1
// for every prefix length L at which some rule's prefix equals v's first L
// bits, and returns how many leading bits of v the walk depended on: any
// value agreeing with v in those bits yields the same plens.
func trieLookup(n *tnode, v u128, nbits int, plens *u128) int {
	var prev *tnode
	matched := 0
	for n != nil {
		if d := firstDiff(v, n.prefix); d < n.end {
			return d + 1 // the first differing bit is needed too
		}
		matched = n.end
		if n.nRules > 0 {
			setBit(plens, matched-1)
		}
		if matched >= nbits {
			return nbits
		}
		prev = n
		n = n.edges[v.bit(matched)]
	}
	// Fell off the trie: the branch not taken at 'matched' must be excluded
	// too unless there is none.
	if prev == nil || prev.isLeaf() {
		return matched
	}
	return matched + 1
}

func setBit(v *u128, i int) {
	if i < 64 {
		v[0] |= 1 << (63 - i)
	} else {
		v[1] |= 1 << (127 - i)
	}
}

func (v u128) has(i int) bool { return v.bit(i) == 1 }
