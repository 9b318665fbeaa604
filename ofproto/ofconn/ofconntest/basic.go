package ofconntest

import (
	"sync"

	"github.com/gvs-project/gvs/ofproto/ofconn"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// Basic is a minimal switch-side handler for channel tests: it answers
// FEATURES_REQUEST (datapath ID DPID, no ports), GET_CONFIG_REQUEST (the
// last SET_CONFIG, initially flags 0 and miss_send_len 128) and
// BARRIER_REQUEST, records every other message in order, and answers
// anything else that expects a reply with nothing.
type Basic struct {
	DPID uint64

	mu     sync.Mutex
	config ofp.SwitchConfig
	seen   []*ofp.Msg
}

// ServeOpenFlow implements ofconn.Handler.
func (b *Basic) ServeOpenFlow(s ofconn.Sender, m *ofp.Msg) {
	b.mu.Lock()
	b.seen = append(b.seen, m)
	cfg := b.config
	if cfg == (ofp.SwitchConfig{}) {
		cfg.MissSendLen = 128
	}
	b.mu.Unlock()
	switch body := m.Body.(type) {
	case *ofp.FeaturesRequest:
		s.Reply(m, &ofp.FeaturesReply{DatapathID: b.DPID, NBuffers: 0, NTables: 254, Capabilities: 0xc7})
	case *ofp.GetConfigRequest:
		s.Reply(m, &ofp.GetConfigReply{SwitchConfig: cfg})
	case *ofp.SetConfig:
		b.mu.Lock()
		b.config = body.SwitchConfig
		b.mu.Unlock()
	case *ofp.BarrierRequest:
		s.Reply(m, &ofp.BarrierReply{})
	}
}

// Seen returns the messages delivered so far, in order.
func (b *Basic) Seen() []*ofp.Msg {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]*ofp.Msg(nil), b.seen...)
}
