package ofconntest

import (
	"fmt"
	"sync"

	"github.com/gvs-project/gvs/ofproto/ofconn"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// Recorder is an ofconn.Sender that records what is sent.
type Recorder struct {
	V uint8 // negotiated version to pretend

	mu     sync.Mutex
	sent   []*ofp.Msg
	wire   [][]byte
	closed bool
	state  ofconn.State
}

var _ ofconn.Sender = (*Recorder)(nil)

// New returns a recorder for wire version v.
func New(v uint8) *Recorder { return &Recorder{V: v} }

// Version implements ofconn.Sender.
func (r *Recorder) Version() uint8 { return r.V }

// State implements ofconn.Sender.
func (r *Recorder) State() *ofconn.State { return &r.state }

// Send implements ofconn.Sender: m is encoded and decoded back.
func (r *Recorder) Send(xid uint32, m ofp.Message) error {
	b, err := ofp.Encode(nil, r.V, xid, m)
	if err != nil {
		return fmt.Errorf("ofconntest: encoding: %w", err)
	}
	return r.record(b)
}

func (r *Recorder) record(b []byte) error {
	d, err := ofp.Decode(b)
	if err != nil {
		return fmt.Errorf("ofconntest: sent message does not decode: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ofconn.ErrClosed
	}
	r.sent = append(r.sent, d)
	r.wire = append(r.wire, b)
	return nil
}

// Reply implements ofconn.Sender.
func (r *Recorder) Reply(req *ofp.Msg, m ofp.Message) error { return r.Send(req.XID, m) }

// ReplyError implements ofconn.Sender with the same bytes ofconn.Conn sends.
func (r *Recorder) ReplyError(req *ofp.Msg, code ofp.ErrCode) error {
	data, _ := ofp.EncodeMsg(nil, req)
	if len(data) > 64 {
		data = data[:64]
	}
	b, err := ofp.Encode(nil, req.Version, req.XID, ofp.NewErrorMsg(req.Version, code, data))
	if err != nil {
		return fmt.Errorf("ofconntest: encoding error: %w", err)
	}
	return r.record(b)
}

// Close implements ofconn.Sender; later sends fail with ofconn.ErrClosed.
func (r *Recorder) Close() error {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	return nil
}

// Closed reports whether Close was called.
func (r *Recorder) Closed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

// Sent returns the decoded messages sent so far.
func (r *Recorder) Sent() []*ofp.Msg {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*ofp.Msg(nil), r.sent...)
}

// Wire returns the encoded messages sent so far.
func (r *Recorder) Wire() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]byte(nil), r.wire...)
}

// Reset forgets recorded messages.
func (r *Recorder) Reset() {
	r.mu.Lock()
	r.sent, r.wire = nil, nil
	r.mu.Unlock()
}
