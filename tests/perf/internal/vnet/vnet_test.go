package vnet

import (
	"encoding/binary"
	"testing"

	"golang.org/x/sys/unix"
)

func TestDecodeStats64ReadsPacketAndDropCounters(t *testing.T) {
	val := make([]byte, 8*24)
	for i, v := range map[int]uint64{0: 11, 1: 22, 6: 33, 7: 44} {
		binary.NativeEndian.PutUint64(val[8*i:], v)
	}
	attrs := AppendAttr(nil, unix.IFLA_MTU, []byte{0, 5, 0, 0})
	attrs = AppendAttr(attrs, unix.IFLA_IFNAME, []byte("g0\x00"))
	attrs = AppendAttr(attrs, unix.IFLA_STATS64, val)
	c, err := DecodeStats64(attrs)
	if err != nil {
		t.Fatal(err)
	}
	if c != (LinkCounters{RxPackets: 11, TxPackets: 22, RxDropped: 33, TxDropped: 44}) {
		t.Fatalf("got %+v", c)
	}
	if _, err := DecodeStats64(attrs[:len(attrs)-8]); err == nil {
		t.Fatal("decoded a truncated attribute")
	}
	if _, err := DecodeStats64(AppendAttr(nil, unix.IFLA_MTU, []byte{0, 5, 0, 0})); err == nil {
		t.Fatal("decoded counters from a message without IFLA_STATS64")
	}
}
