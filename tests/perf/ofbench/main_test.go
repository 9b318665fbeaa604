package main

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/tests/internal/flowgen"
)

func TestMixedFlowsAreDistinctDeterministicAndSplitOverFourTables(t *testing.T) {
	a, b := flowgen.Mixed(1000), flowgen.Mixed(1000)
	if !bytes.Equal(a, b) {
		t.Fatal("two calls gave different files")
	}
	lines := strings.Split(strings.TrimSuffix(string(a), "\n"), "\n")
	if len(lines) != 1000 {
		t.Fatalf("got %d rules, want 1000", len(lines))
	}
	seen := map[string]bool{}
	perTable := map[string]int{}
	for _, l := range lines {
		// The match is everything but the cookie and the actions.
		fields := strings.Split(l, ",")
		var match []string
		for _, f := range fields {
			if strings.HasPrefix(f, "cookie=") {
				continue
			}
			if strings.HasPrefix(f, "actions=") {
				break
			}
			match = append(match, f)
		}
		key := strings.Join(match, ",")
		if seen[key] {
			t.Fatalf("duplicate match %q", key)
		}
		seen[key] = true
		perTable[fields[0]]++
	}
	want := map[string]int{"table=0": 200, "table=1": 300, "table=2": 300, "table=3": 200}
	for k, n := range want {
		if perTable[k] != n {
			t.Errorf("%s: %d rules, want %d", k, perTable[k], n)
		}
	}
}

func TestTupleFlowsHaveOneExactRulePerFrameAndADropRule(t *testing.T) {
	got := string(tupleFlows(2))
	want := "priority=100,tcp,in_port=1,nw_src=10.1.0.0,nw_dst=192.168.0.1,tp_src=1024,tp_dst=80,actions=output:2\n" +
		"priority=100,tcp,in_port=1,nw_src=10.1.0.1,nw_dst=192.168.1.1,tp_src=1025,tp_dst=81,actions=output:2\n" +
		"priority=0,actions=drop\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestTCPFrameHasValidChecksums(t *testing.T) {
	f := tcpFrame([4]byte{10, 1, 0, 1}, [4]byte{192, 168, 1, 1}, 1025, 81)
	if len(f) != 60 {
		t.Fatalf("frame is %d bytes, want 60", len(f))
	}
	if c := fold(sum(f[14:34])); c != 0xffff {
		t.Errorf("IPv4 header checksum does not verify: %#x", c)
	}
	pseudo := sum(f[26:34]) + 6 + 20
	if c := fold(pseudo + sum(f[34:54])); c != 0xffff {
		t.Errorf("TCP checksum does not verify: %#x", c)
	}
	if h := tupleFrames(2)[1]; h != hex.EncodeToString(f) {
		t.Errorf("tupleFrames(2)[1] = %s, want the frame of tuple 1", h)
	}
}

func TestTxOnP2IsReadFromDpctlShow(t *testing.T) {
	out := "dummy@ovs-dummy:\n  port 1: p1 (dummy)\n    RX packets:5 errors:0 dropped:0 overruns:? frame:?\n    TX packets:7 errors:0\n" +
		"  port 2: p2 (dummy-pmd)\n    RX packets:0 errors:0 dropped:0 overruns:? frame:?\n    TX packets:42 errors:0 dropped:0 aborted:? carrier:?\n"
	m := txP2RE.FindStringSubmatch(out)
	if m == nil || m[1] != "42" {
		t.Fatalf("got %q, want TX 42", m)
	}
}

func TestStatsGivesMedianMinMax(t *testing.T) {
	if med, lo, hi := stats([]float64{3, 1, 2}); med != 2 || lo != 1 || hi != 3 {
		t.Errorf("odd: %v %v %v", med, lo, hi)
	}
	if med, lo, hi := stats([]float64{4, 1, 2, 3}); med != 2.5 || lo != 1 || hi != 4 {
		t.Errorf("even: %v %v %v", med, lo, hi)
	}
}

func TestComplaintsIgnoreOfctlTimingLogLines(t *testing.T) {
	stderr := "2026-11-30T00:39:05Z|00001|timeval|WARN|Unreasonably long 1003ms poll interval\n" +
		"2026-11-30T00:39:05Z|00004|coverage|INFO|Event coverage\n"
	if got := complaints(stderr); got != "" {
		t.Errorf("timing lines kept: %q", got)
	}
	if got := complaints(stderr + "ovs-ofctl: br0: unknown table\n"); got != "ovs-ofctl: br0: unknown table" {
		t.Errorf("got %q", got)
	}
}
