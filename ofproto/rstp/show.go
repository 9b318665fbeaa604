package rstp

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

func col(s string, w int) string {
	if len(s) > w {
		s = s[:w]
	}
	return s + strings.Repeat(" ", w+1-len(s))
}

func idDetails(sb *strings.Builder, id uint64, hello, maxAge, fwd uint16) {
	fmt.Fprintf(sb, "  stp-priority    %d\n", id>>48)
	m := id & macBits
	fmt.Fprintf(sb, "  stp-system-id   %02x:%02x:%02x:%02x:%02x:%02x\n",
		byte(m>>40), byte(m>>32), byte(m>>24), byte(m>>16), byte(m>>8), byte(m))
	fmt.Fprintf(sb, "  stp-hello-time  %ds\n", hello)
	fmt.Fprintf(sb, "  stp-max-age     %ds\n", maxAge)
	fmt.Fprintf(sb, "  stp-fwd-delay   %ds\n", fwd)
}

// Show appends the bridge's rstp/show text to sb.
func (b *Bridge) Show(sb *strings.Builder) {
	b.lock()
	defer b.unlock()
	fmt.Fprintf(sb, "---- %s ----\n", b.name)
	sb.WriteString("Root ID:\n")
	var root *Port
	for _, p := range b.ports {
		if p.portID == b.rootPortID && b.rootPortID != 0 {
			root = p
		}
	}
	if b.rootPrio.RootID == b.bridgeID {
		idDetails(sb, b.bridgeID, b.bridgeTimes.Hello, b.bridgeTimes.MaxAge, b.bridgeTimes.FwdDelay)
		sb.WriteString("  This bridge is the root\n")
	} else {
		if root == nil {
			sb.WriteString("unknown root port\n")
			return
		}
		idDetails(sb, b.rootPrio.RootID, root.designatedTimes.Hello, root.designatedTimes.MaxAge, root.designatedTimes.FwdDelay)
		fmt.Fprintf(sb, "  root-port       %s\n", root.name)
		fmt.Fprintf(sb, "  root-path-cost  %d\n", b.rootPrio.RootPathCost)
	}
	sb.WriteString("\nBridge ID:\n")
	idDetails(sb, b.bridgeID, b.bridgeTimes.Hello, b.bridgeTimes.MaxAge, b.bridgeTimes.FwdDelay)
	sb.WriteString("\n")
	fmt.Fprintf(sb, "  %s%s%s%s%s\n", col("Interface", 10), col("Role", 10), col("State", 10), col("Cost", 8), col("Pri.Nbr", 7))
	sb.WriteString("  ---------- ---------- ---------- -------- -------\n")
	ports := slices.Clone(b.ports)
	slices.SortFunc(ports, func(x, y *Port) int { return cmp.Compare(x.number, y.number) })
	for _, p := range ports {
		if p.State() == Disabled {
			continue
		}
		fmt.Fprintf(sb, "  %s%s%s%-9d%d.%d\n", col(p.name, 10), col(p.role.String(), 10), col(p.State().String(), 10),
			p.pathCost, p.priority, p.number)
	}
	sb.WriteString("\n")
}
