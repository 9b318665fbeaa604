// Package ethaddr reads and writes Ethernet addresses as Open vSwitch's
// ETH_ADDR_SCAN_FMT and ETH_ADDR_FMT do: six colon-separated hexadecimal
// bytes of one or two digits in, always two lower-case digits out. It
// imports nothing of gvs.
package ethaddr

import (
	"fmt"
	"strconv"
	"strings"
)

// Scan reads an address ("0:1:2:3:4:5" or "00:01:02:03:04:05").
func Scan(s string) (mac [6]byte, ok bool) {
	parts := strings.Split(s, ":")
	if len(parts) != 6 {
		return mac, false
	}
	for i, p := range parts {
		v, err := strconv.ParseUint(p, 16, 8)
		if err != nil || len(p) == 0 || len(p) > 2 {
			return mac, false
		}
		mac[i] = byte(v)
	}
	return mac, true
}

// String writes an address as Open vSwitch prints it.
func String(m [6]byte) string {
	return fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5])
}
