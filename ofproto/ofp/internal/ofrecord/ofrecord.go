package ofrecord

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sort"
	"sync"

	"github.com/gvs-project/gvs/ofproto/ofp"
)

// Record is one message seen on a recorded connection.
type Record struct {
	Conn int    // connection number, from 0
	Sent bool   // true if the recorder sent it
	Data []byte // the whole message
}

// Recorder accepts connections on a listener and records them.
type Recorder struct {
	l  net.Listener
	wg sync.WaitGroup

	mu      sync.Mutex
	records []Record // guarded by mu
	nconn   int      // guarded by mu
}

// Listen starts a recorder on a unix socket at path.
func Listen(path string) (*Recorder, error) {
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	r := &Recorder{l: l}
	r.wg.Add(1)
	go r.runAccept()
	return r, nil
}

// Records returns a copy of everything recorded so far, grouped by
// connection (in accept order) so that the result does not depend on how
// connection goroutines interleave.
func (r *Recorder) Records() []Record {
	r.mu.Lock()
	out := append([]Record(nil), r.records...)
	r.mu.Unlock()
	sort.SliceStable(out, func(i, j int) bool { return out[i].Conn < out[j].Conn })
	return out
}

// Reset forgets what was recorded.
func (r *Recorder) Reset() {
	r.mu.Lock()
	r.records, r.nconn = nil, 0
	r.mu.Unlock()
}

// Close stops accepting and waits for connections to end.
func (r *Recorder) Close() error {
	err := r.l.Close()
	r.wg.Wait()
	return err
}

func (r *Recorder) runAccept() {
	defer r.wg.Done()
	for {
		c, err := r.l.Accept()
		if err != nil {
			return
		}
		r.mu.Lock()
		id := r.nconn
		r.nconn++
		r.mu.Unlock()
		r.wg.Add(1)
		go r.runConn(c, id)
	}
}

func (r *Recorder) add(rec Record) {
	r.mu.Lock()
	r.records = append(r.records, rec)
	r.mu.Unlock()
}

func (r *Recorder) runConn(c net.Conn, id int) {
	defer r.wg.Done()
	defer c.Close()
	// Speak first, as a switch does, with every version we know; the
	// client's hello decides the version.
	if out, err := ofp.Encode(nil, 6, 0, ofp.NewHello(1, 2, 3, 4, 5, 6)); err == nil {
		r.add(Record{Conn: id, Sent: true, Data: out})
		if _, err := c.Write(out); err != nil {
			return
		}
	}
	hdr := make([]byte, 8)
	for {
		if _, err := io.ReadFull(c, hdr); err != nil {
			return
		}
		n := int(binary.BigEndian.Uint16(hdr[2:]))
		if n < 8 {
			return
		}
		msg := make([]byte, n)
		copy(msg, hdr)
		if _, err := io.ReadFull(c, msg[8:]); err != nil {
			return
		}
		r.add(Record{Conn: id, Data: msg})
		reply := answer(msg)
		if reply == nil {
			continue
		}
		r.add(Record{Conn: id, Sent: true, Data: reply})
		if _, err := c.Write(reply); err != nil {
			return
		}
	}
}

// answer returns the minimal reply to msg, or nil.
func answer(msg []byte) []byte {
	m, err := ofp.Decode(msg)
	if err != nil {
		var oe *ofp.Error
		if errors.As(err, &oe) {
			data := msg
			if len(data) > 64 {
				data = data[:64]
			}
			out, _ := ofp.Encode(nil, msg[0], binary.BigEndian.Uint32(msg[4:]), ofp.NewErrorMsg(msg[0], oe.Code, data))
			return out
		}
		return nil
	}
	var body ofp.Message
	switch m.Body.(type) {
	case *ofp.EchoRequest:
		body = &ofp.EchoReply{Data: m.Body.(*ofp.EchoRequest).Data}
	case *ofp.FeaturesRequest:
		body = &ofp.FeaturesReply{DatapathID: 0x0000_0000_0000_00aa, NBuffers: 0, NTables: 254, Capabilities: 0x47}
	case *ofp.GetConfigRequest:
		body = &ofp.GetConfigReply{SwitchConfig: ofp.SwitchConfig{Flags: ofp.FragNormal, MissSendLen: 0xffff}}
	case *ofp.BarrierRequest:
		body = &ofp.BarrierReply{}
	default:
		return emptyStatsReply(msg)
	}
	out, err := ofp.Encode(nil, m.Version, m.XID, body)
	if err != nil {
		return nil
	}
	return out
}

// emptyStatsReply answers a standard stats request (ovs-ofctl asks for
// port descriptions and table features to resolve names) with an empty
// reply: the request's stats header with the reply type and no body.
func emptyStatsReply(msg []byte) []byte {
	const vendorStats = 0xffff
	v := msg[0]
	req, hl := uint8(16), 12
	if v != 1 {
		req, hl = 18, 16
	}
	if msg[1] != req || len(msg) < hl || binary.BigEndian.Uint16(msg[8:]) == vendorStats {
		return nil
	}
	const tableFeatures = 12
	out := append([]byte(nil), msg[:hl]...)
	if binary.BigEndian.Uint16(msg[8:]) == tableFeatures {
		// An empty table-features reply is malformed: describe table 0
		// (ofp13_table_features is 64 bytes) with the eight required
		// properties, each empty (4-byte header padded to 8).
		tf := make([]byte, 64+8*8)
		tf[1] = byte(len(tf))
		for i := 0; i < 8; i++ {
			p := tf[64+8*i:]
			p[1], p[3] = byte(2*i), 4 // OFPTFPT13_INSTRUCTIONS, NEXT_TABLES, ...
		}
		out = append(out, tf...)
	}
	out[1] = req + 1
	binary.BigEndian.PutUint16(out[2:], uint16(len(out)))
	binary.BigEndian.PutUint16(out[10:], 0) // no "more" flag
	return out
}
