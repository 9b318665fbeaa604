package packet

import "testing"

func TestMetadataResetClearsEverythingButAnInvalidatedTunnel(t *testing.T) {
	var md Metadata
	md.InPort, md.RecircID, md.CtState, md.CtConn = 1, 2, 3, 4
	md.CtLabel[15] = 5
	md.Tunnel.Dst, md.Tunnel.ID, md.Tunnel.IPv6Dst[0] = 0x0a000001, 7, 0xfe
	md.Reset()
	want := Metadata{}
	want.Tunnel.ID = 7 // left behind, but the key is invalid
	if md != want {
		t.Fatalf("after Reset: %+v, want %+v", md, want)
	}
	if md.Tunnel.Valid() {
		t.Fatal("tunnel key still valid after Reset")
	}
}

func TestPushPullAndInsertRemoveKeepOffsets(t *testing.T) {
	p := FromBytes([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0x08, 0, 0x45})
	p.L3 = 14
	gap, err := p.InsertAt(12, 4) // a VLAN tag after the MACs
	if err != nil {
		t.Fatal(err)
	}
	copy(gap, []byte{0x81, 0, 0, 5})
	want := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0x81, 0, 0, 5, 0x08, 0, 0x45}
	if string(p.Data()) != string(want) || p.L3 != 18 {
		t.Fatalf("after insert: % x L3=%d", p.Data(), p.L3)
	}
	if !p.RemoveAt(12, 4) {
		t.Fatal("RemoveAt failed")
	}
	if p.Len() != 15 || p.L3 != 14 || p.Data()[12] != 0x08 {
		t.Fatalf("after remove: % x L3=%d", p.Data(), p.L3)
	}
	h, err := p.Push(2)
	if err != nil || len(h) != 2 || p.L3 != 16 {
		t.Fatalf("push: %v len=%d L3=%d", err, len(h), p.L3)
	}
	if !p.Pull(2) || p.L3 != 14 {
		t.Fatalf("pull: L3=%d", p.L3)
	}
	if _, err := p.Push(Headroom + 1); err != ErrNoRoom {
		t.Fatalf("push beyond headroom: %v, want ErrNoRoom", err)
	}
}

func TestPoolReusesPacketsAndNeverGrowsPastCapacity(t *testing.T) {
	pool := NewPool(2)
	a, b := pool.Get(), pool.Get()
	c := pool.Get() // empty pool: allocates
	if pool.Allocated != 3 {
		t.Fatalf("allocated %d, want 3", pool.Allocated)
	}
	pool.Put(a)
	pool.Put(b)
	pool.Put(c) // over capacity: dropped
	if pool.Free() != 2 {
		t.Fatalf("free %d, want 2", pool.Free())
	}
	if allocs := testing.AllocsPerRun(100, func() { pool.Put(pool.Get()) }); allocs != 0 {
		t.Fatalf("Get/Put allocated %.1f times", allocs)
	}
}

func TestChecksumIncrementalUpdateMatchesRecompute(t *testing.T) {
	hdr := []byte{0x45, 0, 0, 0x54, 0x12, 0x34, 0x40, 0, 64, 1, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2}
	sum := Checksum(hdr)
	hdr[10], hdr[11] = byte(sum>>8), byte(sum)
	if Checksum(hdr) != 0 {
		t.Fatal("header with its checksum does not verify")
	}
	old := uint32(10<<24 | 2)
	hdr[19] = 99
	upd := UpdateChecksum32(sum, old, uint32(10<<24|99))
	hdr[10], hdr[11] = 0, 0
	if want := Checksum(hdr); upd != want {
		t.Fatalf("incremental %#04x, recomputed %#04x", upd, want)
	}
}
