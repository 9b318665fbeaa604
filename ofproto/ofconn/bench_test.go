package ofconn_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/gvs-project/gvs/ofproto/ofconn"
	"github.com/gvs-project/gvs/ofproto/ofconn/ofconntest"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// BenchmarkEchoRoundTrip measures sequential echo request/reply round
// trips over a unix socket; msgs/s is round trips per second.
func BenchmarkEchoRoundTrip(b *testing.B) {
	s := &ofconn.Server{Handler: &ofconntest.Basic{}}
	target := startServerB(b, s)
	replies := make(chan struct{}, 1)
	c, err := ofconn.Dial(context.Background(), target, ofconn.Config{},
		ofconn.HandlerFunc(func(_ ofconn.Sender, m *ofp.Msg) {
			if m.Raw == ofp.RawOFPT_ECHO_REPLY {
				replies <- struct{}{}
			}
		}))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	req := &ofp.EchoRequest{}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := c.Send(uint32(i), req); err != nil {
			b.Fatal(err)
		}
		<-replies
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkFlowModStream measures a one-way stream of OF1.3 flow_mods
// decoded and delivered to the handler, closed by one barrier.
func BenchmarkFlowModStream(b *testing.B) {
	var got atomic.Int64
	s := &ofconn.Server{Handler: ofconn.HandlerFunc(func(s ofconn.Sender, m *ofp.Msg) {
		switch m.Body.(type) {
		case *ofp.FlowMod:
			got.Add(1)
		case *ofp.BarrierRequest:
			s.Reply(m, &ofp.BarrierReply{})
		}
	})}
	target := startServerB(b, s)
	done := make(chan struct{}, 1)
	c, err := ofconn.Dial(context.Background(), target, ofconn.Config{Versions: []uint8{4}},
		ofconn.HandlerFunc(func(_ ofconn.Sender, m *ofp.Msg) {
			if m.Raw == ofp.RawOFPT11_BARRIER_REPLY {
				done <- struct{}{}
			}
		}))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	fm := &ofp.FlowMod{Format: ofp.FormatOXM, Priority: 100, BufferID: 0xffffffff, OutPort: 0xffffffff, OutGroup: 0xffffffff}
	wire, err := ofp.Encode(nil, 4, 1, fm)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(wire)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := c.SendRaw(wire); err != nil {
			b.Fatal(err)
		}
	}
	c.Send(2, &ofp.BarrierRequest{})
	<-done
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
	if n := got.Load(); n != int64(b.N) {
		b.Fatalf("handler got %d flow_mods, want %d", n, b.N)
	}
}

func startServerB(b *testing.B, s *ofconn.Server) string {
	path := b.TempDir() + "/br0.mgmt"
	if _, err := s.Listen("punix:" + path); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return "unix:" + path
}
