package afpacket

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"github.com/gvs-project/gvs/internal/race"
	"golang.org/x/sys/unix"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gvs-project/gvs/datapath/netdev"
	"github.com/gvs-project/gvs/datapath/packet"
	"github.com/gvs-project/gvs/internal/nstest"
)

const pkgName = "datapath/netdev/afpacket"

// peerNS is a veth pair whose end "root" stays here (opened by the test)
// and whose other end sits in a fresh namespace with address peerIP/24.
type peerNS struct {
	root, peer string
	ns         string
	rootIP     net.IP
	peerIP     net.IP
	peerMAC    [6]byte
}

func setupPeer(t *testing.T, binaries ...string) *peerNS {
	nstest.Require(t, pkgName, binaries...)
	a, b := nstest.Veth(t)
	ns := nstest.Netns(t)
	nstest.Run(t, "ip", "link", "set", b, "netns", ns)
	nstest.InNetns(t, ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
	nstest.InNetns(t, ns, "ip", "addr", "add", "10.201.7.2/24", "dev", b)
	nstest.InNetns(t, ns, "ip", "link", "set", b, "up")
	out := nstest.InNetns(t, ns, "cat", "/sys/class/net/"+b+"/address")
	hw, err := net.ParseMAC(string(bytes.TrimSpace([]byte(out))))
	if err != nil {
		t.Fatal(err)
	}
	p := &peerNS{root: a, peer: b, ns: ns, rootIP: net.IPv4(10, 201, 7, 1).To4(), peerIP: net.IPv4(10, 201, 7, 2).To4()}
	copy(p.peerMAC[:], hw)
	return p
}

func open(t *testing.T, cfg Config) *Device {
	t.Helper()
	d, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func arpRequest(src [6]byte, srcIP, dstIP net.IP) []byte {
	f := make([]byte, 42)
	copy(f[0:], []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	copy(f[6:], src[:])
	binary.BigEndian.PutUint16(f[12:], 0x0806)
	copy(f[14:], []byte{0, 1, 8, 0, 6, 4, 0, 1})
	copy(f[22:], src[:])
	copy(f[28:], srcIP)
	copy(f[38:], dstIP)
	return f
}

func send(t *testing.T, d *Device, pool *packet.Pool, frames ...[]byte) {
	t.Helper()
	var b packet.Batch
	for _, f := range frames {
		p := pool.Get()
		p.SetData(f)
		b.Add(p)
	}
	if err := d.Send(0, &b, pool); err != nil {
		t.Fatal(err)
	}
}

// recvUntil receives on queue 0 until want frames arrived or timeout,
// sleeping in a Poller between tries.
func recvUntil(t *testing.T, d *Device, pool *packet.Pool, want int, timeout time.Duration) [][]byte {
	t.Helper()
	pl, err := netdev.NewPoller()
	if err != nil {
		t.Fatal(err)
	}
	defer pl.Close()
	if err := pl.Add(d, 0); err != nil {
		t.Fatal(err)
	}
	var got [][]byte
	deadline := time.Now().Add(timeout)
	for len(got) < want && time.Now().Before(deadline) {
		var b packet.Batch
		n, err := d.Recv(0, &b, pool)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range b.Slice() {
			got = append(got, append([]byte(nil), p.Data()...))
		}
		netdev.FreeBatch(&b, pool)
		if n == 0 {
			pl.Wait(50 * time.Millisecond)
		}
	}
	return got
}

func TestARPRequestSentIsAnsweredFromNamespace(t *testing.T) {
	p := setupPeer(t)
	d := open(t, Config{Name: p.root})
	pool := packet.NewPool(64)
	mac := d.MAC()
	if mac == ([6]byte{}) {
		t.Fatal("MAC is zero")
	}
	req := arpRequest(mac, p.rootIP, p.peerIP)
	send(t, d, pool, req)
	got := recvUntil(t, d, pool, 1, 3*time.Second)
	if len(got) != 1 {
		t.Fatalf("received %d frames, want 1 ARP reply: %x", len(got), got)
	}
	r := got[0]
	if len(r) < 42 || !bytes.Equal(r[0:6], mac[:]) || !bytes.Equal(r[6:12], p.peerMAC[:]) ||
		binary.BigEndian.Uint16(r[12:]) != 0x0806 || binary.BigEndian.Uint16(r[20:]) != 2 ||
		!bytes.Equal(r[28:32], p.peerIP) || !bytes.Equal(r[38:42], p.rootIP) {
		t.Fatalf("not the ARP reply expected: %x", r)
	}
	// Our own request must not come back as an outgoing copy.
	if more := recvUntil(t, d, pool, 1, 100*time.Millisecond); len(more) != 0 {
		t.Fatalf("unexpected extra frames: %x", more)
	}
	s := d.Stats()
	want := netdev.Stats{TxPackets: 1, TxBytes: 42, RxPackets: 1, RxBytes: uint64(len(r))}
	if s != want {
		t.Fatalf("stats %+v, want %+v", s, want)
	}
}

func TestPingFromNamespaceIsReceivedOncePerPacket(t *testing.T) {
	p := setupPeer(t, "ping")
	d := open(t, Config{Name: p.root, RxQueues: 2})
	pool := packet.NewPool(64)
	mac := d.MAC()
	// A static neighbour entry: only the echo requests reach us.
	nstest.InNetns(t, p.ns, "ip", "neigh", "add", p.rootIP.String(), "lladdr", net.HardwareAddr(mac[:]).String(), "dev", p.peer)
	// Nobody answers: ping's exit status is 1 by design.
	nstest.RunIgnoreStatus("ip", "netns", "exec", p.ns, "ping", "-c", "5", "-i", "0.01", "-W", "0.01", "-q", p.rootIP.String())
	var got [][]byte
	deadline := time.Now().Add(3 * time.Second)
	for len(got) < 5 && time.Now().Before(deadline) {
		for q := 0; q < d.NumRxQueues(); q++ {
			var b packet.Batch
			d.Recv(q, &b, pool)
			for _, pk := range b.Slice() {
				got = append(got, append([]byte(nil), pk.Data()...))
			}
			netdev.FreeBatch(&b, pool)
		}
		time.Sleep(time.Millisecond)
	}
	if len(got) != 5 {
		t.Fatalf("received %d frames, want 5", len(got))
	}
	for i, f := range got {
		// IPv4, ICMP, echo request, from the peer.
		if len(f) < 42 || binary.BigEndian.Uint16(f[12:]) != 0x0800 || f[23] != 1 || f[34] != 8 || !bytes.Equal(f[26:30], p.peerIP) {
			t.Fatalf("frame %d is not an echo request: %x", i, f)
		}
	}
	if s := d.Stats(); s.RxPackets != 5 || s.RxDropped != 0 || s.RxErrors != 0 {
		t.Fatalf("stats %+v", s)
	}
}

func TestVLANTagTakenByKernelIsReinserted(t *testing.T) {
	nstest.Require(t, pkgName)
	a, b := nstest.Veth(t)
	tx := open(t, Config{Name: a})
	rx := open(t, Config{Name: b})
	pool := packet.NewPool(64)
	// The receiving kernel moves an in-band tag into skb metadata before
	// packet sockets see the frame; Recv must put it back unchanged.
	mk := func(tpid, tci uint16) []byte {
		f := benchFrame(rx.MAC(), tx.MAC(), 64)
		binary.BigEndian.PutUint16(f[12:], tpid)
		binary.BigEndian.PutUint16(f[14:], tci)
		binary.BigEndian.PutUint16(f[16:], 0x88b5)
		return f
	}
	sent := [][]byte{mk(0x8100, 0x2064), mk(0x88a8, 7), mk(0x8100, 0)}
	send(t, tx, pool, sent...)
	got := recvUntil(t, rx, pool, len(sent), 3*time.Second)
	if len(got) != len(sent) {
		t.Fatalf("received %d frames, want %d", len(got), len(sent))
	}
	for i := range sent {
		if !bytes.Equal(got[i], sent[i]) {
			t.Errorf("frame %d:\n got %x\nwant %x", i, got[i], sent[i])
		}
	}
}

func TestOffloadedUDPChecksumIsCompletedOnReceive(t *testing.T) {
	p := setupPeer(t, "bash")
	d := open(t, Config{Name: p.root})
	pool := packet.NewPool(64)
	mac := d.MAC()
	nstest.InNetns(t, p.ns, "ip", "neigh", "add", p.rootIP.String(), "lladdr", net.HardwareAddr(mac[:]).String(), "dev", p.peer)
	nstest.InNetns(t, p.ns, "bash", "-c", fmt.Sprintf("echo hello-gvs > /dev/udp/%s/9999", p.rootIP))
	got := recvUntil(t, d, pool, 1, 3*time.Second)
	if len(got) != 1 {
		t.Fatalf("received %d frames, want 1", len(got))
	}
	f := got[0]
	if f[23] != 17 {
		t.Fatalf("not UDP: %x", f)
	}
	ip := f[14:]
	l4 := ip[20:binary.BigEndian.Uint16(ip[2:])]
	sum := packet.PseudoHeaderIPv4(binary.BigEndian.Uint32(ip[12:]), binary.BigEndian.Uint32(ip[16:]), 17, len(l4))
	if c := packet.Fold(packet.ChecksumPartial(l4, sum)); c != 0 {
		t.Fatalf("UDP checksum does not verify (residue %#04x): %x", c, f)
	}
}

func TestDeviceReportsInterfaceAttributes(t *testing.T) {
	nstest.Require(t, pkgName)
	a, _ := nstest.Veth(t)
	d := open(t, Config{Name: a})
	ifi, err := net.InterfaceByName(a)
	if err != nil {
		t.Fatal(err)
	}
	// A new veth's carrier comes up asynchronously, a moment after both
	// ends are set up.
	for end := time.Now().Add(3 * time.Second); d.LinkState() != netdev.LinkUp && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
	if d.Ifindex() != ifi.Index || d.Type() != "system" || d.Name() != a || d.LinkState() != netdev.LinkUp {
		t.Fatalf("ifindex %d type %q name %q link %v", d.Ifindex(), d.Type(), d.Name(), d.LinkState())
	}
	// SIOCGIFFLAGS hides promiscuity taken by sockets; sysfs shows it.
	fl, err := os.ReadFile("/sys/class/net/" + a + "/flags")
	if err != nil {
		t.Fatal(err)
	}
	if f, err := strconv.ParseUint(strings.TrimSpace(string(fl)), 0, 32); err != nil || f&unix.IFF_PROMISC == 0 {
		t.Fatalf("interface not promiscuous: flags %#x, %v", f, err)
	}
	if err := d.SetMTU(1400); err != nil || d.MTU() != 1400 {
		t.Fatalf("SetMTU: %v, MTU %d", err, d.MTU())
	}
	mac := [6]byte{0x02, 0x11, 0x22, 0x33, 0x44, 0x55}
	if err := d.SetMAC(mac); err != nil || d.MAC() != mac {
		t.Fatalf("SetMAC: %v, MAC %x", err, d.MAC())
	}
	nstest.Run(t, "ip", "link", "set", a, "down")
	if d.LinkState() != netdev.LinkDown {
		t.Fatal("link state up after ip link set down")
	}
	if _, err := Open(Config{Name: "gvs-no-such-if"}); err == nil {
		t.Fatal("Open of a missing interface succeeded")
	}
}

func TestOversizeFrameIsDroppedAndRestOfBatchSent(t *testing.T) {
	nstest.Require(t, pkgName)
	a, b := nstest.Veth(t)
	tx := open(t, Config{Name: a})
	rx := open(t, Config{Name: b})
	pool := packet.NewPool(64)
	small := benchFrame(rx.MAC(), tx.MAC(), 64)
	send(t, tx, pool, small, benchFrame(rx.MAC(), tx.MAC(), 3000), small)
	got := recvUntil(t, rx, pool, 2, 3*time.Second)
	if len(got) != 2 {
		t.Fatalf("received %d, want 2", len(got))
	}
	if s := tx.Stats(); s.TxPackets != 2 || s.TxDropped != 1 || s.TxBytes != 128 {
		t.Fatalf("tx stats %+v", s)
	}
}

func TestRecvAndSendDoNotAllocate(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts are meaningless under -race")
	}
	nstest.Require(t, pkgName)
	a, b := nstest.Veth(t)
	tx := open(t, Config{Name: a})
	rx := open(t, Config{Name: b})
	pool := packet.NewPool(256)
	f := benchFrame(rx.MAC(), tx.MAC(), 64)
	var sb, rb packet.Batch
	cycle := func() {
		for i := 0; i < packet.BatchSize; i++ {
			p := pool.Get()
			p.SetData(f)
			sb.Add(p)
		}
		tx.Send(0, &sb, pool)
		rx.Recv(0, &rb, pool)
		netdev.FreeBatch(&rb, pool)
	}
	cycle()
	if n := testing.AllocsPerRun(100, cycle); n != 0 {
		t.Fatalf("send+recv allocates %v times per batch", n)
	}
	// Draining what is left exercises the ring walk too.
	time.Sleep(20 * time.Millisecond)
	if s := rx.Stats(); s.RxPackets == 0 {
		t.Fatalf("nothing received: %+v", s)
	}
}

// benchFrame is a frame of a local experimental EtherType, which the
// receiving kernel drops at once.
func benchFrame(dst, src [6]byte, n int) []byte {
	f := make([]byte, n)
	copy(f, dst[:])
	copy(f[6:], src[:])
	binary.BigEndian.PutUint16(f[12:], 0x88b5)
	return f
}

// BenchmarkAFPacketVeth sends 64-byte frames in batches of 32 into one
// end of a veth pair and receives them from the other; Mpps counts frames
// received.
func BenchmarkAFPacketVeth(bm *testing.B) {
	nstest.Require(bm, pkgName)
	a, b := nstest.Veth(bm)
	tx, err := Open(Config{Name: a})
	if err != nil {
		bm.Fatal(err)
	}
	defer tx.Close()
	rx, err := Open(Config{Name: b})
	if err != nil {
		bm.Fatal(err)
	}
	defer rx.Close()
	pool := packet.NewPool(512)
	f := benchFrame(rx.MAC(), tx.MAC(), 64)
	var sb, rb packet.Batch
	received := 0
	drain := func() {
		for {
			n, _ := rx.Recv(0, &rb, pool)
			received += n
			netdev.FreeBatch(&rb, pool)
			if n == 0 {
				return
			}
		}
	}
	bm.ReportAllocs()
	bm.ResetTimer()
	for sent := 0; sent < bm.N; sent += packet.BatchSize {
		for i := 0; i < packet.BatchSize; i++ {
			p := pool.Get()
			p.SetData(f)
			sb.Add(p)
		}
		tx.Send(0, &sb, pool)
		drain()
	}
	// Collect the tail: the last block is handed over on its timeout.
	deadline := time.Now().Add(50 * time.Millisecond)
	for received < bm.N && time.Now().Before(deadline) {
		drain()
	}
	bm.StopTimer()
	bm.ReportMetric(float64(received)/bm.Elapsed().Seconds()/1e6, "Mpps")
	s := tx.Stats()
	r := rx.Stats()
	bm.ReportMetric(float64(s.TxPackets-r.RxPackets)/float64(s.TxPackets)*100, "loss%")
}

// BenchmarkAFPacketVethTx measures the send side alone (the peer end has
// no packet socket; its kernel drops the frames).
func BenchmarkAFPacketVethTx(bm *testing.B) {
	nstest.Require(bm, pkgName)
	a, _ := nstest.Veth(bm)
	tx, err := Open(Config{Name: a})
	if err != nil {
		bm.Fatal(err)
	}
	defer tx.Close()
	pool := packet.NewPool(64)
	f := benchFrame([6]byte{2, 0, 0, 0, 0, 1}, tx.MAC(), 64)
	var sb packet.Batch
	bm.ReportAllocs()
	bm.ResetTimer()
	for sent := 0; sent < bm.N; sent += packet.BatchSize {
		for i := 0; i < packet.BatchSize; i++ {
			p := pool.Get()
			p.SetData(f)
			sb.Add(p)
		}
		tx.Send(0, &sb, pool)
	}
	bm.StopTimer()
	s := tx.Stats()
	bm.ReportMetric(float64(s.TxPackets)/bm.Elapsed().Seconds()/1e6, "Mpps")
	bm.ReportMetric(float64(s.TxDropped)/float64(s.TxPackets+s.TxDropped)*100, "drop%")
}
