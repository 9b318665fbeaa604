package tap

import (
	"bytes"
	"encoding/binary"
	"github.com/gvs-project/gvs/internal/race"
	"net"
	"testing"
	"time"

	"github.com/gvs-project/gvs/datapath/netdev"
	"github.com/gvs-project/gvs/datapath/packet"
	"github.com/gvs-project/gvs/internal/nstest"
)

const pkgName = "datapath/netdev/tap"

func open(t *testing.T, cfg Config) *Device {
	t.Helper()
	d, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func TestOpenCreatesUpInterfaceWithAttributes(t *testing.T) {
	nstest.Require(t, pkgName)
	name := "gvtp" + nstest.Suffix()
	mac := [6]byte{0x02, 0, 0, 0, 0x12, 0x34}
	d := open(t, Config{Name: name, MTU: 1400, MAC: mac})
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		t.Fatal(err)
	}
	if d.Ifindex() != ifi.Index || d.Type() != "internal" || d.MTU() != 1400 || d.MAC() != mac || d.LinkState() != netdev.LinkUp {
		t.Fatalf("ifindex %d (want %d) type %q mtu %d mac %x link %v", d.Ifindex(), ifi.Index, d.Type(), d.MTU(), d.MAC(), d.LinkState())
	}
	if err := d.SetMTU(9000); err != nil || d.MTU() != 9000 {
		t.Fatalf("SetMTU: %v, MTU %d", err, d.MTU())
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := net.InterfaceByName(name); err == nil {
		t.Fatal("interface still exists after Close")
	}
	if _, err := Open(Config{Name: "a-name-longer-than-15"}); err == nil {
		t.Fatal("Open accepted an over-long name")
	}
}

// TestARPRequestWrittenIsAnsweredByStack writes an ARP request into a tap
// moved into a fresh namespace and reads the kernel's reply from it.
func TestARPRequestWrittenIsAnsweredByStack(t *testing.T) {
	nstest.Require(t, pkgName)
	name := "gvtp" + nstest.Suffix()
	d := open(t, Config{Name: name})
	ns := nstest.Netns(t)
	nstest.Run(t, "ip", "link", "set", name, "netns", ns)
	nstest.InNetns(t, ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
	nstest.InNetns(t, ns, "ip", "addr", "add", "10.201.9.2/24", "dev", name)
	nstest.InNetns(t, ns, "ip", "link", "set", name, "up")

	pool := packet.NewPool(64)
	src := [6]byte{0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0x01}
	req := make([]byte, 42)
	copy(req, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	copy(req[6:], src[:])
	binary.BigEndian.PutUint16(req[12:], 0x0806)
	copy(req[14:], []byte{0, 1, 8, 0, 6, 4, 0, 1})
	copy(req[22:], src[:])
	copy(req[28:], []byte{10, 201, 9, 1})
	copy(req[38:], []byte{10, 201, 9, 2})
	var b packet.Batch
	p := pool.Get()
	p.SetData(req)
	b.Add(p)
	if err := d.Send(0, &b, pool); err != nil {
		t.Fatal(err)
	}

	pl, err := netdev.NewPoller()
	if err != nil {
		t.Fatal(err)
	}
	defer pl.Close()
	if err := pl.Add(d, 0); err != nil {
		t.Fatal(err)
	}
	var reply []byte
	others := 0
	for deadline := time.Now().Add(3 * time.Second); reply == nil && time.Now().Before(deadline); {
		pl.Wait(100 * time.Millisecond)
		d.Recv(0, &b, pool)
		for _, p := range b.Slice() {
			f := p.Data()
			// Frames sent while the tap was up in the root namespace
			// may precede the reply.
			if len(f) >= 42 && binary.BigEndian.Uint16(f[12:]) == 0x0806 && binary.BigEndian.Uint16(f[20:]) == 2 {
				reply = append([]byte(nil), f...)
			} else {
				others++
			}
		}
		netdev.FreeBatch(&b, pool)
	}
	if reply == nil {
		t.Fatal("no ARP reply")
	}
	if !bytes.Equal(reply[0:6], src[:]) || !bytes.Equal(reply[28:32], []byte{10, 201, 9, 2}) || !bytes.Equal(reply[32:38], src[:]) {
		t.Fatalf("unexpected reply %x", reply)
	}
	s := d.Stats()
	if s.TxPackets != 1 || s.TxBytes != 42 || s.RxPackets != uint64(1+others) || s.TxDropped != 0 {
		t.Fatalf("stats %+v", s)
	}
}

func TestSendWhileDownDropsAndCounts(t *testing.T) {
	nstest.Require(t, pkgName)
	d := open(t, Config{Name: "gvtp" + nstest.Suffix(), Down: true})
	pool := packet.NewPool(4)
	var b packet.Batch
	p := pool.Get()
	p.SetData(make([]byte, 60))
	b.Add(p)
	d.Send(0, &b, pool)
	if s := d.Stats(); s.TxDropped != 1 || s.TxPackets != 0 {
		t.Fatalf("stats %+v", s)
	}
	if d.LinkState() != netdev.LinkDown {
		t.Fatal("down tap reports link up")
	}
}

func TestRecvAndSendDoNotAllocate(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts are meaningless under -race")
	}
	nstest.Require(t, pkgName)
	d := open(t, Config{Name: "gvtp" + nstest.Suffix(), Down: true})
	pool := packet.NewPool(64)
	var b packet.Batch
	f := make([]byte, 60)
	allocs := testing.AllocsPerRun(100, func() {
		for i := 0; i < packet.BatchSize; i++ {
			p := pool.Get()
			p.SetData(f)
			b.Add(p)
		}
		d.Send(0, &b, pool)
		d.Recv(0, &b, pool)
		netdev.FreeBatch(&b, pool)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per batch", allocs)
	}
}
