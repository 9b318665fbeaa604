package ofconntest

import (
	"bytes"
	"errors"
	"testing"

	"github.com/gvs-project/gvs/ofproto/ofconn"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

func TestBasicAnswersThroughRecorderInWireForm(t *testing.T) {
	r := New(4)
	h := &Basic{DPID: 0xabc}
	h.ServeOpenFlow(r, &ofp.Msg{Version: 4, XID: 5, Raw: ofp.RawOFPT_FEATURES_REQUEST, Body: &ofp.FeaturesRequest{}})
	h.ServeOpenFlow(r, &ofp.Msg{Version: 4, XID: 6, Raw: ofp.RawOFPT_SET_CONFIG, Body: &ofp.SetConfig{SwitchConfig: ofp.SwitchConfig{Flags: ofp.FragDrop, MissSendLen: 200}}})
	h.ServeOpenFlow(r, &ofp.Msg{Version: 4, XID: 7, Raw: ofp.RawOFPT_GET_CONFIG_REQUEST, Body: &ofp.GetConfigRequest{}})
	h.ServeOpenFlow(r, &ofp.Msg{Version: 4, XID: 8, Raw: ofp.RawOFPT11_BARRIER_REQUEST, Body: &ofp.BarrierRequest{}})
	sent := r.Sent()
	if len(sent) != 3 {
		t.Fatalf("recorded %d messages, want 3", len(sent))
	}
	if f, ok := sent[0].Body.(*ofp.FeaturesReply); !ok || sent[0].XID != 5 || f.DatapathID != 0xabc || sent[0].Raw != ofp.RawOFPT13_FEATURES_REPLY {
		t.Fatalf("first reply %v %+v", sent[0].Raw, sent[0].Body)
	}
	if c, ok := sent[1].Body.(*ofp.GetConfigReply); !ok || sent[1].XID != 7 || c.Flags != ofp.FragDrop || c.MissSendLen != 200 {
		t.Fatalf("config reply %+v", sent[1].Body)
	}
	if sent[2].Raw != ofp.RawOFPT11_BARRIER_REPLY || sent[2].XID != 8 {
		t.Fatalf("barrier reply %v xid %d", sent[2].Raw, sent[2].XID)
	}
	if w := r.Wire()[2]; !bytes.Equal(w, []byte{4, 21, 0, 8, 0, 0, 0, 8}) {
		t.Fatalf("barrier reply wire %x", w)
	}
}

func TestRecorderReplyErrorCarriesRequestStart(t *testing.T) {
	r := New(1)
	req := &ofp.Msg{Version: 1, XID: 3, Raw: ofp.RawOFPT_ECHO_REQUEST, Body: &ofp.EchoRequest{Data: make([]byte, 100)}}
	if err := r.ReplyError(req, ofp.OFPBRC_EPERM); err != nil {
		t.Fatal(err)
	}
	e := r.Sent()[0].Body.(*ofp.ErrorMsg)
	if e.ErrCode(1) != ofp.OFPBRC_EPERM || len(e.Data) != 64 || !bytes.Equal(e.Data[:4], []byte{1, 2, 0, 108}) {
		t.Fatalf("error %s data %x", e.ErrCode(1), e.Data)
	}
	r.Close()
	if err := r.Send(1, &ofp.BarrierReply{}); !errors.Is(err, ofconn.ErrClosed) {
		t.Fatalf("send after close: %v", err)
	}
}
