package conntrack

import (
	"testing"

	"github.com/gvs-project/gvs/datapath/packet"
)

// FuzzExecute feeds arbitrary frames through ct with commit and NAT, then
// through a plain ct, a dump and a sweep: nothing may panic.
func FuzzExecute(f *testing.F) {
	f.Add(tcp4(f, cA, cB, 1, 2, fSYN, 1, 0, nil), uint8(0))
	f.Add(udp4(f, cA, cB, 1, 2), uint8(1))
	f.Add(icmp4Echo(f, cA, cB, 8, 1), uint8(2))
	f.Add(icmp4Error(f, cB, cA, udp4(f, cA, cB, 1, 2)), uint8(3))
	f.Add(tcp6(f, "fd00::1", "fd00::2", 1, 2, fSYN, 1, 0), uint8(0))
	f.Add(icmp6Echo(f, "fd00::1", "fd00::2", 128, 1), uint8(1))
	acts := []string{
		"ct(commit,zone=1,nat(src=192.168.0.1-192.168.0.2:100-101))",
		"ct(commit,nat(dst=[fd00::9]:80))",
		"ct(commit,helper=tftp,mark=1/1)",
		"ct(force_commit,zone=2,nat)",
		"ct(commit,helper=ftp)",
	}
	f.Fuzz(func(t *testing.T, frame []byte, sel uint8) {
		tr := New(Config{SkipChecksums: sel&4 != 0})
		p := packet.FromBytes(frame)
		runPkt(t, tr, acts[int(sel)%len(acts)], p)
		runPkt(t, tr, "ct(zone=1,nat)", p)
		q := packet.FromBytes(frame)
		runPkt(t, tr, acts[int(sel)%len(acts)], q)
		_ = FormatDump(tr.Dump(nil), false)
		tr.Sweep(1<<62, 1000)
	})
}
