package main

import (
	"bytes"
	"encoding/binary"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/datapath/packet"
)

func TestFramesCarryTheFlowsAddressesInBothDirections(t *testing.T) {
	f := template()
	if len(f) != frameLen {
		t.Fatalf("frame is %d bytes, want %d", len(f), frameLen)
	}
	if sum := packet.Checksum(f[14:34]); sum != 0 {
		t.Fatalf("IPv4 header checksum does not verify: %#04x", sum)
	}
	const i = 0x01020304
	setFlow(f, i, true)
	wantX := []byte{0x02, 0x00, 1, 2, 3, 4}
	wantY := []byte{0x02, 0x01, 1, 2, 3, 4}
	if !bytes.Equal(f[0:6], wantY) || !bytes.Equal(f[6:12], wantX) {
		t.Fatalf("from gA: dst %x src %x, want dst %x src %x", f[0:6], f[6:12], wantY, wantX)
	}
	setFlow(f, i, false)
	if !bytes.Equal(f[0:6], wantX) || !bytes.Equal(f[6:12], wantY) {
		t.Fatalf("from gB: dst %x src %x, want dst %x src %x", f[0:6], f[6:12], wantX, wantY)
	}
	if sum := packet.Checksum(f[14:34]); sum != 0 {
		t.Fatal("setFlow broke the IPv4 checksum")
	}
	if got := binary.BigEndian.Uint16(f[40:]); got != 0 {
		t.Fatalf("UDP checksum %#04x, want 0 (none)", got)
	}
}

func TestFlowAddressesAreDistinctUnicastAndNeverTheProbes(t *testing.T) {
	seen := map[[6]byte]bool{probeX: true, probeY: true}
	for _, i := range []int{0, 1, 255, 256, 65535, 1 << 20, 1000000, 1<<24 - 1} {
		for _, m := range [][6]byte{macX(i), macY(i)} {
			if m[0]&1 != 0 || m[0]&2 == 0 {
				t.Fatalf("%x is not locally administered unicast", m)
			}
			if seen[m] {
				t.Fatalf("%x used twice", m)
			}
			seen[m] = true
		}
	}
}

func TestParseNListAcceptsTheIssuesSizesAndRejectsJunk(t *testing.T) {
	got, err := parseNList("256,10000,100000,400000,1000000")
	if err != nil {
		t.Fatal(err)
	}
	want := []int{256, 10000, 100000, 400000, 1000000}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	for _, bad := range []string{"", "0", "-1", "10,x", "20000000"} {
		if _, err := parseNList(bad); err == nil {
			t.Errorf("parseNList(%q) accepted", bad)
		}
	}
}

func TestForwarderKindSetsTheTableSizeForGVSAndRaisedOVSOnly(t *testing.T) {
	for _, c := range []struct {
		name          string
		ovs, set, bad bool
	}{{"gvs", false, true, false}, {"ovs", true, false, false}, {"ovs-raised", true, true, false}, {"raw", false, false, true}} {
		ovs, set, err := forwarderKind(c.name)
		if (err != nil) != c.bad || ovs != c.ovs || set != c.set {
			t.Errorf("forwarderKind(%q) = %v, %v, %v", c.name, ovs, set, err)
		}
	}
}

func TestParseFDBStatsReadsCurrentAndMaximum(t *testing.T) {
	out := `Statistics for bridge "mbA":
  Current/maximum MAC entries in the table: 20000/1000000
  Current static MAC entries in the table : 0
  Total number of learned MAC entries     : 20000
`
	s, err := parseFDBStats(out)
	if err != nil {
		t.Fatal(err)
	}
	if s != (fdbStats{Current: 20000, Max: 1000000}) {
		t.Fatalf("got %+v", s)
	}
	if _, err := parseFDBStats("ovs-appctl: no such bridge\n"); err == nil {
		t.Fatal("parsed an error message")
	}
}

func TestCountFlowsCountsOnlyFlowLines(t *testing.T) {
	out := `flow-dump from the main thread:
recirc_id(0),in_port(2),packet_type(ns=0,id=0),eth(src=02:00:00:00:00:01,dst=02:01:00:00:00:01),eth_type(0x0800),ipv4(frag=no), packets:3, bytes:180, used:0.1s, actions:3
recirc_id(0),in_port(3),packet_type(ns=0,id=0),eth(src=02:01:00:00:00:01,dst=02:00:00:00:00:01),eth_type(0x0800),ipv4(frag=no), packets:3, bytes:180, used:0.1s, actions:2
flow-dump from pmd on cpu core: 0
`
	n, err := countFlows(strings.NewReader(out))
	if err != nil || n != 2 {
		t.Fatalf("countFlows = %d, %v; want 2", n, err)
	}
}

func sampleResults() []result {
	return []result{
		{N: 256, Forwarder: "gvs", Time: "2026-11-30 07:00:00", Load: "1.00 2.00 3.00", SentMpps: 0.9, DeliveredMpps: 0.5,
			FDBEntries: 1024, FDBMax: 4000000, MegaflowsWarm: 4, MegaflowsSteady: 4, FlowLimit: -1, WarmSeconds: 0.1, WarmComplete: true},
		{N: 256, Forwarder: "ovs", SentMpps: 0.9, DeliveredMpps: 0.1, FloodPctSent: 1.5, FloodPctDelivered: 40,
			FDBEntries: 1024, FDBMax: 8192, MegaflowsWarm: 1028, MegaflowsSteady: 1028, FlowLimit: 200000, WarmLost: 3},
		{N: 10000, Forwarder: "gvs", SentMpps: 0.8, DeliveredMpps: 0.45, FDBEntries: 40000, WarmComplete: true},
		{N: 10000, Forwarder: "ovs", Err: "probe: no frame, within 60s"},
	}
}

func TestCSVRoundTripsEveryField(t *testing.T) {
	rs := sampleResults()
	var b bytes.Buffer
	if err := writeCSV(&b, rs); err != nil {
		t.Fatal(err)
	}
	got, err := readCSV(&b)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(rs) {
		t.Fatalf("read %d rows, want %d", len(got), len(rs))
	}
	for i := range rs {
		if got[i] != rs[i] {
			t.Errorf("row %d: got %+v, want %+v", i, got[i], rs[i])
		}
	}
	if _, err := readCSV(strings.NewReader("a,b\n1,2\n")); err == nil {
		t.Fatal("read a CSV with another header")
	}
}

func TestPlotIsWellFormedSVGWithALinePerForwarderAndPanel(t *testing.T) {
	svg := plotSVG(sampleResults(), `caption with <&> "quotes"`)
	d := xml.NewDecoder(strings.NewReader(svg))
	polylines := 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "polyline" {
			polylines++
		}
	}
	// gvs has two good points in each of three panels; ovs one good
	// point (its N = 10000 row is an error), so no line.
	if polylines != 3 {
		t.Fatalf("%d polylines, want 3", polylines)
	}
	if plotSVG(nil, "empty") == "" {
		t.Fatal("no SVG for no results")
	}
}
