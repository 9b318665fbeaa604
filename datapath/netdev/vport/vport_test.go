package vport

import (
	"errors"
	"testing"

	"github.com/gvs-project/gvs/datapath/packet"
	"github.com/gvs-project/gvs/datapath/tnl"
)

func TestNewNamesPortsAsOpenVSwitch(t *testing.T) {
	for _, c := range []struct {
		typ      tnl.Type
		dst      uint16
		name, ty string
	}{
		{tnl.TypeGeneve, 0, "genev_sys_6081", "geneve"},
		{tnl.TypeVXLAN, 0, "vxlan_sys_4789", "vxlan"},
		{tnl.TypeVXLAN, 4790, "vxlan_sys_4790", "vxlan"},
		{tnl.TypeGRE, 0, "gre_sys", "gre"},
		{tnl.TypeIP6GRE, 0, "ip6gre_sys", "ip6gre"},
		{tnl.TypeERSPAN, 0, "erspan_sys", "erspan"},
		{tnl.TypeIP6ERSPAN, 0, "ip6erspan_sys", "ip6erspan"},
		{tnl.TypeGTPU, 0, "gtpu_sys_2152", "gtpu"},
		{tnl.TypeLISP, 0, "lisp_sys_4341", "lisp"},
		{tnl.TypeSTT, 0, "stt_sys_7471", "stt"},
		{tnl.TypeBareUDP, 6635, "udp_sys_6635", "bareudp"},
	} {
		d, err := New("", c.typ, c.dst)
		if err != nil {
			t.Fatal(err)
		}
		if d.Name() != c.name || d.Type() != c.ty || d.TunnelType() != c.typ || d.NumRxQueues() != 0 {
			t.Errorf("New(%d, %d) = %s %s %d queues", c.typ, c.dst, d.Name(), d.Type(), d.NumRxQueues())
		}
		if c.dst != 0 && d.DstPort() != c.dst {
			t.Errorf("DstPort() = %d, want %d", d.DstPort(), c.dst)
		}
	}
	if _, err := New("x", 99, 0); err == nil {
		t.Error("New accepted an unknown tunnel type")
	}
	if _, err := New("", tnl.TypeGRE, 4789); err == nil {
		t.Error("New accepted a UDP port for GRE")
	}
}

func TestReserveSeqHandsOutConsecutiveNumbers(t *testing.T) {
	d, err := New("", tnl.TypeGRE, 0)
	if err != nil {
		t.Fatal(err)
	}
	if a, b, c := d.ReserveSeq(1), d.ReserveSeq(32), d.ReserveSeq(1); a != 0 || b != 1 || c != 33 {
		t.Errorf("ReserveSeq gave %d, %d, %d; want 0, 1, 33", a, b, c)
	}
}

func TestSendDropsAndCounts(t *testing.T) {
	d, _ := New("", tnl.TypeGeneve, 0)
	pool := packet.NewPool(4)
	var b packet.Batch
	b.Add(pool.Get())
	b.Add(pool.Get())
	if err := d.Send(0, &b, pool); err != nil {
		t.Fatal(err)
	}
	if b.N != 0 || pool.Free() != 4 {
		t.Errorf("batch %d left, pool %d free; want 0 and 4", b.N, pool.Free())
	}
	if s := d.Stats(); s.TxDropped != 2 || s.TxPackets != 0 {
		t.Errorf("stats %+v, want 2 tx drops", s)
	}
	if _, err := d.Recv(0, &b, pool); !errors.Is(err, ErrNoQueues) {
		t.Errorf("Recv error %v, want ErrNoQueues", err)
	}
}
