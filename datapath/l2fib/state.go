package l2fib

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"
)

// StateVersion is the version of the encoding ExportState writes and
// ImportState reads; any other is refused.
const StateVersion = 1

// ErrState is wrapped by every ImportState refusal.
var ErrState = errors.New("MAC table state refused")

// The encoding, big-endian: "MTS1", the entry count (u32), the entries
// (VLAN u16, MAC, port u32, seconds since last refresh u32, static u8),
// dynamic ones oldest first, then static ones; then the table's twelve
// counters (u64 each, as in counters). Ports are the datapath's port
// numbers: the importing datapath must number its ports the same.
const (
	stateMagic = "MTS1"
	entryRec   = 2 + 6 + 4 + 4 + 1
	numCtrs    = 12
)

func (t *Table) counters() [numCtrs]*atomic.Uint64 {
	return [numCtrs]*atomic.Uint64{&t.learned, &t.expired, &t.evicted, &t.moved, &t.locked, &t.blocked,
		&t.refused, &t.flooded, &t.unicast, &t.hairpin, &t.runts, &t.noRoom}
}

// ExportState encodes every entry with its age and the counters.
// Learning that happens while it runs may be missing.
func (t *Table) ExportState() []byte {
	static, dyn := t.byAge()
	now := t.now()
	all := append(dyn, static...)
	b := append(make([]byte, 0, 8+len(all)*entryRec+8*numCtrs), stateMagic...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(all)))
	for _, e := range all {
		mac := keyMAC(e.key)
		b = binary.BigEndian.AppendUint16(b, keyVLAN(e.key))
		b = append(b, mac[:]...)
		b = binary.BigEndian.AppendUint32(b, e.port)
		age := uint32(0)
		if int32(now-e.used) > 0 {
			age = now - e.used
		}
		b = binary.BigEndian.AppendUint32(b, age)
		st := byte(0)
		if e.static {
			st = 1
		}
		b = append(b, st)
	}
	for _, c := range t.counters() {
		b = binary.BigEndian.AppendUint64(b, c.Load())
	}
	return b
}

// ImportState adds the entries and counters of an ExportState encoding to
// t, each entry as old as it was. The whole encoding is checked before
// anything is added. Dynamic entries beyond t's capacity are left out,
// oldest first, and counted as expired (as a smaller mac-table-size
// would). It is meant for a table that is not learning yet (a datapath
// not started). It returns how many entries it added.
func (t *Table) ImportState(b []byte) (int, error) {
	if len(b) < 8 || string(b[:4]) != stateMagic {
		return 0, fmt.Errorf("%w: not a version %d MAC table state", ErrState, StateVersion)
	}
	n := int(binary.BigEndian.Uint32(b[4:]))
	if n > MaxCapacity || len(b) != 8+n*entryRec+8*numCtrs {
		return 0, fmt.Errorf("%w: %d entries in %d bytes", ErrState, n, len(b))
	}
	type rec struct {
		key       uint64
		port, age uint32
		static    bool
	}
	recs := make([]rec, n)
	for i := range recs {
		r := b[8+i*entryRec:]
		vlan := binary.BigEndian.Uint16(r)
		if vlan > 4095 {
			return 0, fmt.Errorf("%w: entry %d: VLAN %d", ErrState, i, vlan)
		}
		if r[16] > 1 {
			return 0, fmt.Errorf("%w: entry %d: flags %#x", ErrState, i, r[16])
		}
		recs[i] = rec{makeKey(vlan, MAC(r[2:8])), binary.BigEndian.Uint32(r[8:]), binary.BigEndian.Uint32(r[12:]), r[16] == 1}
	}
	ctrs := b[8+n*entryRec:]
	dynamic := 0
	for _, r := range recs {
		if !r.static {
			dynamic++
		}
	}
	skip := min(max(0, n-t.Capacity()), dynamic)
	// Adding entries must not count as learning: the counters end as
	// they were plus the imported ones. (t is not forwarding yet.)
	var before [numCtrs]uint64
	for i, c := range t.counters() {
		before[i] = c.Load()
	}
	before[1] += uint64(skip) // expired
	now := t.now()
	added := 0
	for _, r := range recs {
		if !r.static && skip > 0 {
			skip--
			continue
		}
		var w Warning
		t.learnSlow(r.key, t.hash(r.key), r.port, now-min(r.age, now), r.static, &w)
		added++
	}
	for i, c := range t.counters() {
		c.Store(before[i] + binary.BigEndian.Uint64(ctrs[8*i:]))
	}
	return added, nil
}
