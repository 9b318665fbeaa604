package conntrack

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// StateVersion is the version of the encoding ExportState writes and
// ImportState reads (a state file section's version); any other is
// refused.
const StateVersion = 1

// ErrState is wrapped by every ImportState refusal.
var ErrState = errors.New("conntrack state refused")

// The encoding, big-endian: "CTS1", the connection count (u32), the
// connections, the expectation count (u32), the expectations. A
// connection is its two keys, NAT kind, flags, helper, UDP/ICMP state,
// mark, label, both TCP peers and the nanoseconds left until it expires;
// an expectation is its key and the nanoseconds left. Zone limits,
// timeout policies and the sequence-check setting are configuration and
// not part of it.
const (
	stateMagic   = "CTS1"
	keyRecSize   = 16 + 16 + 2 + 2 + 2 + 1 + 1 + 3
	peerRecSize  = 4 + 4 + 4 + 1 + 1
	connRecSize  = 2*keyRecSize + 4 + 4 + 16 + 2*peerRecSize + 8
	expRecSize   = keyRecSize + 8
	maxStateRecs = 1 << 26
)

func appendKey(b []byte, k *Key) []byte {
	b = append(b, k.Src[:]...)
	b = append(b, k.Dst[:]...)
	b = binary.BigEndian.AppendUint16(b, k.SrcPort)
	b = binary.BigEndian.AppendUint16(b, k.DstPort)
	b = binary.BigEndian.AppendUint16(b, k.Zone)
	return append(b, k.Proto, k.Family, k.SrcType, k.DstType, k.ICMPCode)
}

func readKey(b []byte) Key {
	var k Key
	copy(k.Src[:], b[0:16])
	copy(k.Dst[:], b[16:32])
	k.SrcPort = binary.BigEndian.Uint16(b[32:])
	k.DstPort = binary.BigEndian.Uint16(b[34:])
	k.Zone = binary.BigEndian.Uint16(b[36:])
	k.Proto, k.Family, k.SrcType, k.DstType, k.ICMPCode = b[38], b[39], b[40], b[41], b[42]
	return k
}

// checkKey validates a decoded key.
func checkKey(k *Key) error {
	switch k.Family {
	case 4:
		if [12]byte(k.Src[4:]) != [12]byte{} || [12]byte(k.Dst[4:]) != [12]byte{} {
			return errors.New("IPv4 address with IPv6 bytes")
		}
	case 6:
	default:
		return fmt.Errorf("address family %d", k.Family)
	}
	if k.Proto != protoICMP && k.Proto != protoICMPv6 && (k.SrcType|k.DstType|k.ICMPCode) != 0 {
		return errors.New("ICMP fields on a non-ICMP key")
	}
	return nil
}

// ExportState encodes every live connection of every zone and the
// pending helper expectations, with their remaining lifetimes as of now.
// Connections committed while it runs may be missing.
func (t *Tracker) ExportState() []byte {
	now := t.now()
	b := append(make([]byte, 0, 64+t.Count()*connRecSize), stateMagic...)
	b = append(b, 0, 0, 0, 0)
	n := uint32(0)
	var exps []expectation
	for i := range t.zones {
		z := t.zones[i].Load()
		if z == nil {
			continue
		}
		z.forEach(func(c *Conn) bool {
			e := c.expiry()
			if e <= now || n == maxStateRecs {
				return true
			}
			b = appendKey(b, &c.nodes[0].key)
			b = appendKey(b, &c.nodes[1].key)
			b = append(b, c.nodes[0].nat, c.flags, c.helper, c.pstate())
			m, l := c.markLabel()
			b = binary.BigEndian.AppendUint32(b, m)
			b = append(b, l[:]...)
			c.mu.Lock()
			for _, p := range c.tcp {
				b = binary.BigEndian.AppendUint32(b, p.seqlo)
				b = binary.BigEndian.AppendUint32(b, p.seqhi)
				b = binary.BigEndian.AppendUint32(b, p.maxWin)
				b = append(b, p.wscale, p.state)
			}
			c.mu.Unlock()
			b = binary.BigEndian.AppendUint64(b, uint64(e-now))
			n++
			return true
		})
		z.mu.Lock()
		for _, e := range z.exps {
			if e.expires > now {
				exps = append(exps, e)
			}
		}
		z.mu.Unlock()
	}
	binary.BigEndian.PutUint32(b[len(stateMagic):], n)
	b = binary.BigEndian.AppendUint32(b, uint32(len(exps)))
	for _, e := range exps {
		b = appendKey(b, &e.key)
		b = binary.BigEndian.AppendUint64(b, uint64(e.expires-now))
	}
	return b
}

// stateConn is one decoded connection.
type stateConn struct {
	orig, reply                Key
	nat, flags, helper, pstate uint8
	mark                       uint32
	label                      [16]byte
	tcp                        [2]tcpPeer
	left                       int64
}

// decodeState parses and validates an ExportState encoding.
func decodeState(b []byte) ([]stateConn, []expectation, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrState, fmt.Sprintf(format, a...))
	}
	if len(b) < len(stateMagic)+4 || string(b[:len(stateMagic)]) != stateMagic {
		return nil, nil, bad("not a conntrack state encoding")
	}
	n := binary.BigEndian.Uint32(b[len(stateMagic):])
	b = b[len(stateMagic)+4:]
	if n > maxStateRecs || uint64(n)*connRecSize > uint64(len(b)) {
		return nil, nil, bad("%d connections announced, %d bytes present", n, len(b))
	}
	conns := make([]stateConn, n)
	for i := range conns {
		r := b[:connRecSize]
		b = b[connRecSize:]
		s := &conns[i]
		s.orig, s.reply = readKey(r), readKey(r[keyRecSize:])
		r = r[2*keyRecSize:]
		s.nat, s.flags, s.helper, s.pstate = r[0], r[1], r[2], r[3]
		s.mark = binary.BigEndian.Uint32(r[4:])
		copy(s.label[:], r[8:24])
		r = r[24:]
		for d := range s.tcp {
			p := &s.tcp[d]
			p.seqlo = binary.BigEndian.Uint32(r)
			p.seqhi = binary.BigEndian.Uint32(r[4:])
			p.maxWin = binary.BigEndian.Uint32(r[8:])
			p.wscale, p.state = r[12], r[13]
			r = r[peerRecSize:]
		}
		s.left = int64(binary.BigEndian.Uint64(r))
		if err := s.check(); err != nil {
			return nil, nil, bad("connection %d: %v", i, err)
		}
	}
	if len(b) < 4 {
		return nil, nil, bad("truncated before the expectations")
	}
	ne := binary.BigEndian.Uint32(b)
	b = b[4:]
	if uint64(ne)*expRecSize != uint64(len(b)) {
		return nil, nil, bad("%d expectations announced, %d bytes present", ne, len(b))
	}
	exps := make([]expectation, ne)
	for i := range exps {
		exps[i].key = readKey(b)
		exps[i].expires = int64(binary.BigEndian.Uint64(b[keyRecSize:]))
		b = b[expRecSize:]
		if err := checkKey(&exps[i].key); err != nil {
			return nil, nil, bad("expectation %d: %v", i, err)
		}
	}
	return conns, exps, nil
}

func (s *stateConn) check() error {
	for _, k := range []*Key{&s.orig, &s.reply} {
		if err := checkKey(k); err != nil {
			return err
		}
	}
	o, r := &s.orig, &s.reply
	if o.Zone != r.Zone || o.Proto != r.Proto || o.Family != r.Family {
		return errors.New("the two directions differ in zone, protocol or family")
	}
	if s.nat&^(natSrc|natDst) != 0 || s.flags&^connAlgRelated != 0 || s.helper > helperTFTP || s.pstate > othersBidir {
		return errors.New("unknown NAT, flag, helper or state bits")
	}
	if s.nat == 0 && *r != o.reverse() {
		return errors.New("reply key is not the reverse of the original without NAT")
	}
	if o.Proto == protoTCP {
		if s.tcp[0].state > tcpsTimeWait || s.tcp[1].state > tcpsTimeWait || s.pstate != 0 {
			return errors.New("TCP state out of range")
		}
	} else if s.tcp != [2]tcpPeer{} {
		return errors.New("TCP state on a non-TCP connection")
	}
	if s.left <= 0 {
		return errors.New("no time left")
	}
	return nil
}

// ImportResult says what ImportState did.
type ImportResult struct {
	Imported int // connections added
	// Expired counts connections whose time ran out while the state was
	// stored (age).
	Expired int
	// Existing counts connections one of whose keys the tracker already
	// had (the tracker's connection wins).
	Existing int
	// Refused counts connections over a zone limit or the global limit.
	Refused int
	// Expectations counts the helper expectations added.
	Expectations int
}

// String summarises the result for a log line or a command's reply.
func (r ImportResult) String() string {
	return fmt.Sprintf("%d connections restored, %d expired, %d already present, %d over a limit, %d expectations",
		r.Imported, r.Expired, r.Existing, r.Refused, r.Expectations)
}

// ImportState adds the connections and expectations of an ExportState
// encoding made age ago (the time the state spent stored, taken from
// every remaining lifetime): each continues with its keys, NAT, mark,
// label, TCP window state and helper as exported, so that its next
// packets get the ct_state and translation they would have had in the
// exporting tracker. The encoding is checked as a whole first: an error
// (wrapping ErrState) means nothing was added. The tracker's own limits
// and timeout policies apply.
func (t *Tracker) ImportState(b []byte, age time.Duration) (ImportResult, error) {
	var res ImportResult
	conns, exps, err := decodeState(b)
	if err != nil {
		return res, err
	}
	now := t.now()
	for i := range conns {
		s := &conns[i]
		left := s.left - int64(age)
		if left <= 0 {
			res.Expired++
			continue
		}
		switch t.importConn(s, now, left) {
		case importOK:
			res.Imported++
		case importExisting:
			res.Existing++
		case importRefused:
			res.Refused++
		}
	}
	for _, e := range exps {
		left := e.expires - int64(age)
		if left <= 0 {
			continue
		}
		z := t.getZone(e.key.Zone, true)
		z.mu.Lock()
		if !z.dead && len(z.exps) < maxExpectations {
			z.exps = append(z.exps, expectation{key: e.key, expires: now + left})
			z.nexp.Store(int32(len(z.exps)))
			res.Expectations++
		}
		z.mu.Unlock()
	}
	return res, nil
}

const (
	importOK = iota
	importExisting
	importRefused
)

func (t *Tracker) importConn(s *stateConn, now, left int64) int {
	for {
		z := t.getZone(s.orig.Zone, true)
		z.mu.Lock()
		if z.dead {
			z.mu.Unlock()
			continue
		}
		r := t.importLocked(z, s, now, left)
		z.mu.Unlock()
		return r
	}
}

// importLocked is importConn with the zone locked.
//
// Preconditions: z.mu is held.
func (t *Tracker) importLocked(z *zone, s *stateConn, now, left int64) int {
	h := [2]uint64{s.orig.hash(t.seed), s.reply.hash(t.seed)}
	if c, _ := z.lookup(&s.orig, h[0]); c != nil {
		return importExisting
	}
	if c, _ := z.lookup(&s.reply, h[1]); c != nil {
		return importExisting
	}
	if l := z.limit.Load(); l != 0 && z.count.Load() >= int64(l) {
		z.refused.Add(1)
		t.zoneFull.Add(1)
		return importRefused
	}
	if t.count.Add(1) > int64(t.maxConns.Load()) {
		t.count.Add(-1)
		t.full.Add(1)
		return importRefused
	}
	c := t.reuse.newConn(z)
	c.nodes[0].key, c.nodes[0].nat = s.orig, s.nat
	c.nodes[1].key = s.reply
	c.flags, c.helper = s.flags, s.helper
	c.mark.Store(s.mark)
	if s.label != ([16]byte{}) {
		l := s.label
		c.label.Store(&l)
	}
	c.mu.Lock()
	c.tcp = s.tcp
	c.mu.Unlock()
	e := now + left
	if r := e % expiryResolution; r > 0 {
		e += expiryResolution - r
	} else if r < 0 {
		e -= r
	}
	c.expires.Store(e | int64(s.pstate))
	z.insertLocked(c, h)
	z.track(&t.reuse, c)
	return importOK
}
