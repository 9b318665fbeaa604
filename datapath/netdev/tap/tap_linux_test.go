package tap

import (
	"bytes"
	"encoding/binary"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gvs-project/gvs/internal/race"

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
	moveToNamespace(t, name)
	pool := packet.NewPool(64)
	src := [6]byte{0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0x01}
	reply, others := askARP(t, d, pool, src)
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

// moveToNamespace moves tap name into a fresh namespace as 10.201.9.2/24.
func moveToNamespace(t *testing.T, name string) {
	t.Helper()
	ns := nstest.Netns(t)
	nstest.Run(t, "ip", "link", "set", name, "netns", ns)
	nstest.InNetns(t, ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
	nstest.InNetns(t, ns, "ip", "addr", "add", "10.201.9.2/24", "dev", name)
	nstest.InNetns(t, ns, "ip", "link", "set", name, "up")
}

// askARP writes an ARP request from src for 10.201.9.2 into d and reads
// frames until the reply, which it returns with the count of other
// frames read before it.
func askARP(t *testing.T, d *Device, pool *packet.Pool, src [6]byte) (reply []byte, others int) {
	t.Helper()
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
	return reply, others
}

// An internal port handed to a new owner survives the old owner's exit
// (the interface lives while a descriptor does), even moved into another
// namespace, and the new owner sends and receives on it.
func TestHandedOverTapSurvivesTheOldOwner(t *testing.T) {
	nstest.Require(t, pkgName)
	name := "gvtp" + nstest.Suffix()
	old, err := Open(Config{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	moveToNamespace(t, name)
	pool := packet.NewPool(64)
	askARP(t, old, pool, [6]byte{0x02, 0, 0, 0, 0, 1})
	h, err := old.Handoff()
	if err != nil {
		t.Fatal(err)
	}
	fd, err := unix.FcntlInt(uintptr(h.Fds[0]), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	h.Fds = []int{fd}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	d, err := Adopt(name, h)
	if err != nil {
		unix.Close(fd)
		t.Fatal(err)
	}
	defer d.Close()
	if d.Ifindex() != old.Ifindex() {
		t.Fatalf("ifindex %d, was %d", d.Ifindex(), old.Ifindex())
	}
	src := [6]byte{0x02, 0, 0, 0, 0, 2}
	if reply, _ := askARP(t, d, pool, src); !bytes.Equal(reply[0:6], src[:]) {
		t.Fatalf("reply %x", reply)
	}
	if s := d.Stats(); s.TxPackets != 2 {
		t.Fatalf("counters %+v, want 2 sent in all", s)
	}
	// A descriptor that is not a tap is refused.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	h.Fds = []int{int(r.Fd())}
	if _, err := Adopt(name, h); err == nil || !strings.Contains(err.Error(), "is not a tun/tap device") {
		t.Fatalf("adopting a pipe: %v", err)
	}
}
