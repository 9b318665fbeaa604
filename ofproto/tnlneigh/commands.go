package tnlneigh

import (
	"context"
	"errors"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// Command is one unixctl command, shaped like the daemon's registry rows
// (the same shape as ofproto/router.Command): Run gets the arguments after
// the name, already count-checked, and returns the reply (ending in a
// newline) or an error whose message is the error reply.
type Command struct {
	Name             string
	Usage            string
	MinArgs, MaxArgs int
	Run              func(ctx context.Context, args []string) (string, error)
}

// Error replies, as Open vSwitch 3.1 words them (retrans_time is gvs's).
var (
	errBadIP      = errors.New("bad IP address")
	errBadMAC     = errors.New("bad MAC address")
	errBadAging   = errors.New("bad aging value")
	errBadRetrans = errors.New("bad retrans_time value")
)

// Commands returns tnl/neigh/{show,set,flush,aging,retrans_time} and the
// tnl/arp/{show,set,flush,aging} aliases, in Open vSwitch's registration
// order.
func (c *Cache) Commands() []Command {
	show := func(context.Context, []string) (string, error) { return c.Show(), nil }
	flush := func(context.Context, []string) (string, error) { c.Flush(""); return "OK\n", nil }
	var cmds []Command
	for _, p := range []string{"tnl/arp/", "tnl/neigh/"} {
		cmds = append(cmds,
			Command{Name: p + "show", Run: show},
			Command{Name: p + "set", Usage: "BRIDGE IP MAC", MinArgs: 3, MaxArgs: 3, Run: c.cmdSet},
			Command{Name: p + "flush", Run: flush},
			Command{Name: p + "aging", Usage: "[SECS]", MaxArgs: 1, Run: c.cmdAging},
		)
	}
	return append(cmds, Command{Name: "tnl/neigh/retrans_time", Usage: "[MSECS]", MaxArgs: 1, Run: c.cmdRetrans})
}

// parseSetArgs parses "BRIDGE IP MAC" as tnl/neigh/set does.
func parseSetArgs(args []string) (string, netip.Addr, [6]byte, error) {
	if len(args) != 3 {
		return "", netip.Addr{}, [6]byte{}, errBadIP
	}
	var ip netip.Addr
	var ok bool
	if strings.Contains(args[1], ":") {
		ip, ok = parseIPv6(args[1])
	} else {
		ip, ok = parseIPv4(args[1])
	}
	if !ok {
		return "", netip.Addr{}, [6]byte{}, errBadIP
	}
	mac, ok := parseMAC(args[2])
	if !ok {
		return "", netip.Addr{}, [6]byte{}, errBadMAC
	}
	return args[0], ip, mac, nil
}

func (c *Cache) cmdSet(_ context.Context, args []string) (string, error) {
	br, ip, mac, err := parseSetArgs(args)
	if err != nil {
		return "", err
	}
	c.Set(br, ip, mac)
	return "OK\n", nil
}

// parseSeconds is ovs_scan(s, "%"SCNu32) with 1 <= v <= max: leading white
// space and a sign are accepted, trailing text is ignored, and the value
// wraps to 32 bits.
func parseUint32(s string, max uint32) (uint32, bool) {
	v, _, ok := scanInt(s, 10)
	if !ok || uint32(v) == 0 || uint32(v) > max {
		return 0, false
	}
	return uint32(v), true
}

func (c *Cache) cmdAging(_ context.Context, args []string) (string, error) {
	if len(args) == 0 {
		return strconv.FormatInt(int64(c.Aging()/time.Second), 10) + "\n", nil
	}
	v, ok := parseUint32(args[0], uint32(MaxAging/time.Second))
	if !ok {
		return "", errBadAging
	}
	c.SetAging(time.Duration(v) * time.Second)
	return "OK\n", nil
}

func (c *Cache) cmdRetrans(_ context.Context, args []string) (string, error) {
	if len(args) == 0 {
		return strconv.FormatInt(int64(c.RetransTime()/time.Millisecond), 10) + "\n", nil
	}
	v, ok := parseUint32(args[0], uint32(MaxRetrans/time.Millisecond))
	if !ok {
		return "", errBadRetrans
	}
	c.SetRetransTime(time.Duration(v) * time.Millisecond)
	return "OK\n", nil
}

func isSpace(c byte) bool { return c == ' ' || (c >= '\t' && c <= '\r') }

func hexit(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// scanInt is Open vSwitch's ovs_scan integer conversion: white space, an
// optional sign, a 0x prefix for base 16, digits, wrapping modulo 2^64.
func scanInt(s string, base int) (v uint64, rest string, ok bool) {
	for len(s) > 0 && isSpace(s[0]) {
		s = s[1:]
	}
	neg := len(s) > 0 && s[0] == '-'
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		s = s[1:]
	}
	if base == 16 && len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		s = s[2:]
	}
	n := 0
	for n < len(s) {
		d := hexit(s[n])
		if d < 0 || d >= base {
			break
		}
		v = v*uint64(base) + uint64(d)
		n++
	}
	if n == 0 {
		return 0, s, false
	}
	if neg {
		v = -v
	}
	return v, s[n:], true
}

// parseMAC is eth_addr_from_string: six %hhx separated by colons and
// nothing after.
func parseMAC(s string) (mac [6]byte, ok bool) {
	for i := range mac {
		if i > 0 {
			if len(s) == 0 || s[0] != ':' {
				return [6]byte{}, false
			}
			s = s[1:]
		}
		var v uint64
		if v, s, ok = scanInt(s, 16); !ok {
			return [6]byte{}, false
		}
		mac[i] = byte(v)
	}
	if s != "" {
		return [6]byte{}, false
	}
	return mac, true
}

// parseIPv6 is inet_pton(AF_INET6, s).
func parseIPv6(s string) (netip.Addr, bool) {
	if strings.Contains(s, "%") {
		return netip.Addr{}, false
	}
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is6() {
		return netip.Addr{}, false
	}
	return a, true
}

// parseIPv4 is inet_pton(AF_INET, s).
func parseIPv4(s string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is4() {
		return netip.Addr{}, false
	}
	return a, true
}
