package router

import (
	"context"
	"errors"
	"net/netip"
	"strings"

	"github.com/gvs-project/gvs/ofproto/internal/ovscmd"
)

// Command is one unixctl command, shaped like the daemon's registry rows;
// see ovscmd.Command.
type Command = ovscmd.Command

// Error replies, as Open vSwitch 3.1 words them.
var (
	errInvalidParams    = errors.New("Invalid parameters")
	errInvalidMarkOrGW  = errors.New("Invalid pkt_mark or gateway")
	errInvalidMarkOrGW6 = errors.New("Invalid pkt_mark or IPv6 gateway")
	errInvalidMark      = errors.New("Invalid pkt_mark")
	errInsert           = errors.New("Error while inserting route.")
	errNotFound         = errors.New("Not found")
)

// Commands returns ovs/route/{add,del,show,lookup}.
func (t *Table) Commands() []Command {
	return []Command{
		{Name: "ovs/route/add", Usage: "ip_addr/prefix_len out_br_name [gw] [pkt_mark=mark]", MinArgs: 2, MaxArgs: 4, Run: t.cmdAdd},
		{Name: "ovs/route/show", MinArgs: 0, MaxArgs: 0, Run: func(context.Context, []string) (string, error) { return t.Show(), nil }},
		{Name: "ovs/route/del", Usage: "ip_addr/prefix_len [pkt_mark=mark]", MinArgs: 1, MaxArgs: 2, Run: t.cmdDel},
		{Name: "ovs/route/lookup", Usage: "ip_addr [pkt_mark=mark]", MinArgs: 1, MaxArgs: 2, Run: t.cmdLookup},
	}
}

// addArgs is the parsed form of ovs/route/add's arguments.
type addArgs struct {
	prefix netip.Prefix
	dev    string
	gw     netip.Addr
	mark   uint32
}

func parseAddArgs(args []string) (addArgs, error) {
	var a addArgs
	if len(args) < 2 {
		return a, errInvalidParams
	}
	p, is4, ok := parseRoute(args[0])
	if !ok {
		return a, errInvalidParams
	}
	a.prefix, a.dev = p, args[1]
	if len(args) > 2 {
		m, ok := parseMark(args[2])
		if ok {
			a.mark = m
		} else if is4 {
			gw, ok := ovscmd.ParseIPv4(args[2])
			if !ok {
				return a, errInvalidMarkOrGW
			}
			if !gw.IsUnspecified() {
				a.gw = gw
			}
		} else {
			gw, ok := ovscmd.ParseIPv6(args[2])
			if !ok {
				return a, errInvalidMarkOrGW6
			}
			if !gw.IsUnspecified() {
				a.gw = gw
			}
		}
	}
	if len(args) > 3 {
		m, ok := parseMark(args[3])
		if !ok {
			return a, errInvalidMark
		}
		a.mark = m
	}
	return a, nil
}

func (t *Table) cmdAdd(_ context.Context, args []string) (string, error) {
	a, err := parseAddArgs(args)
	if err != nil {
		return "", err
	}
	if err := t.Add(a.prefix, a.dev, a.gw, a.mark); err != nil {
		return "", errInsert
	}
	return "OK\n", nil
}

// parseDelArgs parses "ip/plen [pkt_mark=mark]".
func parseDelArgs(args []string) (netip.Prefix, uint32, error) {
	if len(args) < 1 {
		return netip.Prefix{}, 0, errInvalidParams
	}
	p, _, ok := parseRoute(args[0])
	if !ok {
		return netip.Prefix{}, 0, errInvalidParams
	}
	var mark uint32
	if len(args) > 1 {
		if mark, ok = parseMark(args[1]); !ok {
			return netip.Prefix{}, 0, errInvalidMark
		}
	}
	return p, mark, nil
}

func (t *Table) cmdDel(_ context.Context, args []string) (string, error) {
	p, mark, err := parseDelArgs(args)
	if err != nil {
		return "", err
	}
	if !t.Del(p, mark) {
		return "", errNotFound
	}
	return "OK\n", nil
}

// parseLookupArgs parses "ip [pkt_mark=mark]"; a prefix must be a host.
func parseLookupArgs(args []string) (netip.Addr, uint32, error) {
	if len(args) < 1 {
		return netip.Addr{}, 0, errInvalidParams
	}
	var dst netip.Addr
	if p, ok := parseIPv4CIDR(args[0]); ok && p.Bits() == 32 {
		dst = p.Addr()
	} else if p, ok := parseIPv6CIDR(args[0]); ok && p.Bits() == 128 {
		dst = p.Addr()
	} else {
		return netip.Addr{}, 0, errInvalidParams
	}
	var mark uint32
	if len(args) > 1 {
		var ok bool
		if mark, ok = parseMark(args[1]); !ok {
			return netip.Addr{}, 0, errInvalidMark
		}
	}
	return dst, mark, nil
}

func (t *Table) cmdLookup(_ context.Context, args []string) (string, error) {
	dst, mark, err := parseLookupArgs(args)
	if err != nil {
		return "", err
	}
	r, ok := t.Lookup(dst, mark)
	if !ok {
		return "", errNotFound
	}
	var b strings.Builder
	b.WriteString("src ")
	b.WriteString(ovscmd.FormatAddr(r.Src))
	b.WriteString("\ngateway ")
	b.WriteString(ovscmd.FormatAddr(r.Gateway))
	b.WriteString("\ndev ")
	b.WriteString(r.Dev)
	b.WriteString("\n")
	return b.String(), nil
}
