package tnlneigh

import (
	"context"
	"errors"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/gvs-project/gvs/ofproto/internal/ovscmd"
)

// Command is one unixctl command, shaped like the daemon's registry rows;
// see ovscmd.Command (ofproto/router.Command is the same type).
type Command = ovscmd.Command

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
	aging := durationCmd(c.Aging, c.SetAging, time.Second, MaxAging, errBadAging)
	var cmds []Command
	for _, p := range []string{"tnl/arp/", "tnl/neigh/"} {
		cmds = append(cmds,
			Command{Name: p + "show", Run: show},
			Command{Name: p + "set", Usage: "BRIDGE IP MAC", MinArgs: 3, MaxArgs: 3, Run: c.cmdSet},
			Command{Name: p + "flush", Run: flush},
			Command{Name: p + "aging", Usage: "[SECS]", MaxArgs: 1, Run: aging},
		)
	}
	retrans := durationCmd(c.RetransTime, c.SetRetransTime, time.Millisecond, MaxRetrans, errBadRetrans)
	return append(cmds, Command{Name: "tnl/neigh/retrans_time", Usage: "[MSECS]", MaxArgs: 1, Run: retrans})
}

// parseSetArgs parses "BRIDGE IP MAC" as tnl/neigh/set does.
func parseSetArgs(args []string) (string, netip.Addr, [6]byte, error) {
	if len(args) != 3 {
		return "", netip.Addr{}, [6]byte{}, errBadIP
	}
	var ip netip.Addr
	var ok bool
	if strings.Contains(args[1], ":") {
		ip, ok = ovscmd.ParseIPv6(args[1])
	} else {
		ip, ok = ovscmd.ParseIPv4(args[1])
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

// parseUint32 is ovs_scan(s, "%"SCNu32) with 1 <= v <= max: leading white
// space and a sign are accepted, trailing text is ignored, and the value
// wraps to 32 bits.
func parseUint32(s string, max uint32) (uint32, bool) {
	v, _, ok := ovscmd.ScanInt(s, 10)
	if !ok || uint32(v) == 0 || uint32(v) > max {
		return 0, false
	}
	return uint32(v), true
}

// durationCmd is the shape of tnl/neigh/aging and retrans_time: without an
// argument it prints the setting in whole units, with one it sets it to
// 1..max units or fails with errBad.
func durationCmd(get func() time.Duration, set func(time.Duration), unit, max time.Duration, errBad error) func(context.Context, []string) (string, error) {
	return func(_ context.Context, args []string) (string, error) {
		if len(args) == 0 {
			return strconv.FormatInt(int64(get()/unit), 10) + "\n", nil
		}
		v, ok := parseUint32(args[0], uint32(max/unit))
		if !ok {
			return "", errBad
		}
		set(time.Duration(v) * unit)
		return "OK\n", nil
	}
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
		if v, s, ok = ovscmd.ScanInt(s, 16); !ok {
			return [6]byte{}, false
		}
		mac[i] = byte(v)
	}
	if s != "" {
		return [6]byte{}, false
	}
	return mac, true
}
