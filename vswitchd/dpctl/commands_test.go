package dpctl

import (
	"testing"

	"encoding/hex"

	"strings"

	"bytes"
)

// netdev-dummy/receive takes a packet's hex grouped with spaces, as
// Open vSwitch does.
func TestPacketArgAcceptsSpacedHex(t *testing.T) {
	const spaced = "0021853763af 0026b98cb0f9 0800 4500 0014 0000 4000 40 06 0000 0a000001 0a000002"
	got, err := packetArg(spaced, 0)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := hex.DecodeString(strings.ReplaceAll(spaced, " ", ""))
	if !bytes.Equal(got, want) {
		t.Errorf("packetArg = %x, want %x", got, want)
	}
}

// netdev-dummy/receive composes a packet from a flow split across lines.
func TestPacketArgAcceptsFlowSplitAcrossLines(t *testing.T) {
	const flat = "in_port(1),eth(src=50:54:00:00:00:0b,dst=50:54:00:00:00:0c),eth_type(0x0800),ipv4(src=10.0.0.4,dst=10.0.0.3,proto=1,tos=0,ttl=64,frag=no),icmp(type=8,code=0)"
	split := strings.Replace(flat, "proto=", "proto=\n", 1)
	want, err := packetArg(flat, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := packetArg(split, 0)
	if err != nil {
		t.Fatalf("packetArg(split): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("split flow composes %x, want %x", got, want)
	}
}
