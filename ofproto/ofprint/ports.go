package ofprint

import (
	"bufio"
	"bytes"
	"fmt"
	"slices"
	"strconv"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// reservedPortNames name the OpenFlow 1.0 reserved ports from 0xfff8.
var reservedPortNames = [8]string{"IN_PORT", "TABLE", "NORMAL", "FLOOD", "ALL", "CONTROLLER", "LOCAL", "ANY"}

// portName formats a 32-bit port number as ovs-ofctl does.
func portName(p uint32) string {
	p16, err := ofp.PortFromOF11(p)
	switch {
	case err != nil:
		return strconv.FormatUint(uint64(p), 10)
	case p16 >= 0xfff8:
		return reservedPortNames[p16-0xfff8]
	}
	return strconv.FormatUint(uint64(p16), 10)
}

var (
	portConfigNames = []string{"PORT_DOWN", "NO_STP", "NO_RECV", "NO_RECV_STP", "NO_FLOOD", "NO_FWD", "NO_PACKET_IN"}
	portStateNames  = []string{"LINK_DOWN", "BLOCKED", "LIVE"}
	// featureNames are the OpenFlow 1.1+ port feature bits; OpenFlow 1.0
	// lacks 40GB_FD, 100GB_FD, 1TB_FD and OTHER (its bits 7-11 are
	// COPPER ... PAUSE_ASYM).
	featureNames = []string{"10MB-HD", "10MB-FD", "100MB-HD", "100MB-FD", "1GB-HD", "1GB-FD", "10GB-FD",
		"40GB-FD", "100GB-FD", "1TB-FD", "OTHER", "COPPER", "FIBER", "AUTO_NEG", "AUTO_PAUSE", "AUTO_PAUSE_ASYM"}
	featureSpeeds = []uint64{10e6, 10e6, 100e6, 100e6, 1e9, 1e9, 10e9, 40e9, 100e9, 1e12}
)

// features11 converts OpenFlow 1.0 feature bits to the 1.1+ layout.
func features11(f uint32, v uint8) uint32 {
	if v != mf.OF10 {
		return f
	}
	return f&0x7f | (f>>7&0x1f)<<11
}

func bitNames(w *bufio.Writer, bits uint32, names []string) {
	if bits == 0 {
		w.WriteString("0\n")
		return
	}
	first := true
	for i := 0; i < 32; i++ {
		if bits&(1<<i) == 0 {
			continue
		}
		if !first {
			w.WriteByte(' ')
		}
		first = false
		if i < len(names) {
			w.WriteString(names[i])
		} else {
			fmt.Fprintf(w, "0x%x", uint32(1)<<i)
		}
	}
	w.WriteByte('\n')
}

// speedKbps is the highest speed among feature bits, as Open vSwitch
// derives OpenFlow 1.0 port speeds.
func speedKbps(f uint32) uint32 {
	var best uint64
	for i, s := range featureSpeeds {
		if f&(1<<i) != 0 && s > best {
			best = s
		}
	}
	return uint32(best / 1000)
}

func printPorts(w *bufio.Writer, v uint8, ports []ofp.Port) {
	ports = slices.Clone(ports)
	slices.SortFunc(ports, func(a, b ofp.Port) int {
		pa, pb := a.PortNo, b.PortNo
		return int(int64(pa) - int64(pb))
	})
	for _, p := range ports {
		name := p.Name[:]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		a := p.HWAddr
		fmt.Fprintf(w, " %s(%s): addr:%02x:%02x:%02x:%02x:%02x:%02x\n", portName(p.PortNo), name, a[0], a[1], a[2], a[3], a[4], a[5])
		w.WriteString("     config:     ")
		bitNames(w, p.Config, portConfigNames)
		w.WriteString("     state:      ")
		bitNames(w, p.State, portStateNames)
		for _, f := range []struct {
			label string
			bits  uint32
		}{{"current:    ", p.Curr}, {"advertised: ", p.Advertised}, {"supported:  ", p.Supported}, {"peer:       ", p.Peer}} {
			if f.bits != 0 {
				w.WriteString("     " + f.label)
				bitNames(w, features11(f.bits, v), featureNames)
			}
		}
		cur, maxs := p.CurrSpeed, p.MaxSpeed
		if v == mf.OF10 {
			cur, maxs = speedKbps(features11(p.Curr, v)), speedKbps(features11(p.Supported, v))
		}
		fmt.Fprintf(w, "     speed: %d Mbps now, %d Mbps max\n", cur/1000, maxs/1000)
	}
}

// counter prints a statistic, "?" when the switch does not keep it.
func counter(n uint64) string {
	if n == ^uint64(0) {
		return "?"
	}
	return strconv.FormatUint(n, 10)
}
