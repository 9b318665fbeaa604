package conntrack

import (
	"bytes"
	"time"

	"github.com/gvs-project/gvs/datapath/packet"
)

// Application-layer helpers (ALGs).
const (
	helperNone uint8 = iota
	helperFTP
	helperTFTP
)

func helperByName(s string) uint8 {
	switch s {
	case "tftp":
		return helperTFTP
	case "ftp":
		return helperFTP
	}
	return helperNone
}

// expectationTTL is how long a helper expectation waits for its
// connection.
const expectationTTL = int64(30 * time.Second)

// maxExpectations bounds the pending expectations of one zone.
const maxExpectations = 256

// expectation admits a connection related to a parent: a new packet
// whose key matches (with SrcPort 0 meaning any source port) is +rel.
type expectation struct {
	key     Key
	expires int64
}

// The helpers are functions from a packet of a connection to the
// expectation it announces; the zone owns the expectations (expect,
// expected), and the Tracker files each in its zone (Tracker.expect).

// tftpExpectation returns the expectation of a connection just
// committed with a helper. TFTP: the server answers a read or write
// request from a new port, so expect server (any port) -> client port.
func tftpExpectation(c *Conn) (Key, bool) {
	if c.helper != helperTFTP || c.nodes[0].key.Proto != protoUDP {
		return Key{}, false
	}
	k := c.nodes[1].key // server -> client as the server sends it
	k.SrcPort = 0
	return k, true
}

// expect adds an expectation for key k (SrcPort 0: any source port) to
// its zone.
func (t *Tracker) expect(k Key, now int64) {
	t.getZone(k.Zone, true).expect(k, now)
}

// expect adds an expectation for key k, dropping the expired ones; a
// zone holds at most maxExpectations.
func (z *zone) expect(k Key, now int64) {
	z.mu.Lock()
	defer z.mu.Unlock()
	exps := z.exps[:0]
	for _, e := range z.exps {
		if e.expires > now {
			exps = append(exps, e)
		}
	}
	if len(exps) < maxExpectations {
		exps = append(exps, expectation{key: k, expires: now + expectationTTL})
	}
	z.exps = exps
	z.nexp.Store(int32(len(exps)))
}

// expected reports whether k is expected by a helper as of now.
func (z *zone) expected(k *Key, now int64) bool {
	q := *k
	q.SrcPort = 0
	z.mu.Lock()
	defer z.mu.Unlock()
	for _, e := range z.exps {
		if e.key == q && e.expires > now {
			return true
		}
	}
	return false
}

// ftpExpectation runs the FTP helper over a packet of an FTP control
// connection: PORT/EPRT from the client and 227/229 passive replies from
// the server announce the data connection, which becomes expected
// (+rel). The payload is not rewritten, so FTP through NAT needs the
// data connection's own NAT rules (gap: OVS rewrites the addresses).
func ftpExpectation(p *packet.Packet, pi *pktInfo, c *Conn, reply bool) (Key, bool) {
	if c.helper != helperFTP || pi.key.Proto != protoTCP || pi.l7 <= 0 || pi.l7 >= pi.l4end {
		return Key{}, false
	}
	payload := p.Data()[pi.l7:pi.l4end]
	var addr [16]byte
	var port uint16
	var ok, active bool
	switch {
	case !reply && bytes.HasPrefix(payload, []byte("PORT ")):
		addr, port, ok = parseFTPHostPort(payload[5:])
		active = true
	case !reply && bytes.HasPrefix(payload, []byte("EPRT ")):
		addr, port, ok = parseFTPEPRT(payload[5:], pi.key.Family)
		active = true
	case reply && bytes.HasPrefix(payload, []byte("227 ")):
		if i := bytes.IndexByte(payload, '('); i >= 0 {
			addr, port, ok = parseFTPHostPort(payload[i+1:])
		}
	case reply && bytes.HasPrefix(payload, []byte("229 ")):
		if i := bytes.Index(payload, []byte("(|||")); i >= 0 {
			port, ok = parseFTPPort(payload[i+4:], '|')
			addr = c.nodes[0].key.Dst // EPSV: the server's own address
		}
	}
	if !ok || port == 0 {
		return Key{}, false
	}
	// Only trust announcements of the control connection's own
	// endpoints: a bounce to a third host is not expected.
	if active && addr != c.nodes[0].key.Src || !active && addr != c.nodes[0].key.Dst {
		return Key{}, false
	}
	var k Key
	k.Zone, k.Proto, k.Family = c.nodes[0].key.Zone, protoTCP, c.nodes[0].key.Family
	if active {
		// The server connects back from its data port to the client.
		k.Src, k.Dst, k.DstPort = c.nodes[0].key.Dst, addr, port
	} else {
		// The client connects to the announced server port.
		k.Src, k.Dst, k.DstPort = c.nodes[0].key.Src, addr, port
	}
	return k, true
}

// parseFTPHostPort parses "h1,h2,h3,h4,p1,p2".
func parseFTPHostPort(b []byte) (addr [16]byte, port uint16, ok bool) {
	var v [6]uint32
	for i := range v {
		n, digits := 0, 0
		for len(b) > 0 && b[0] >= '0' && b[0] <= '9' && digits < 4 {
			n = n*10 + int(b[0]-'0')
			b = b[1:]
			digits++
		}
		if digits == 0 || n > 255 {
			return addr, 0, false
		}
		v[i] = uint32(n)
		if i < 5 {
			if len(b) == 0 || b[0] != ',' {
				return addr, 0, false
			}
			b = b[1:]
		}
	}
	for i := 0; i < 4; i++ {
		addr[i] = byte(v[i])
	}
	return addr, uint16(v[4]<<8 | v[5]), true
}

// parseFTPPort parses a decimal port ended by term.
func parseFTPPort(b []byte, term byte) (uint16, bool) {
	n := 0
	for i := 0; i < len(b) && i < 6; i++ {
		switch {
		case b[i] >= '0' && b[i] <= '9':
			n = n*10 + int(b[i]-'0')
		case b[i] == term && i > 0 && n <= 0xffff:
			return uint16(n), true
		default:
			return 0, false
		}
	}
	return 0, false
}

// parseFTPEPRT parses "|proto|addr|port|" (RFC 2428).
func parseFTPEPRT(b []byte, family uint8) (addr [16]byte, port uint16, ok bool) {
	if len(b) < 8 || b[0] != '|' || b[2] != '|' {
		return addr, 0, false
	}
	if (b[1] == '1') != (family == 4) {
		return addr, 0, false
	}
	rest := b[3:]
	end := bytes.IndexByte(rest, '|')
	if end <= 0 || end > 45 {
		return addr, 0, false
	}
	a, err := parseAddrBytes(rest[:end])
	if err != nil {
		return addr, 0, false
	}
	port, ok = parseFTPPort(rest[end+1:], '|')
	return a, port, ok
}
