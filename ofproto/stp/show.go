package stp

import (
	"fmt"
	"strings"
)

// col left-justifies s in width w+1, cut to w characters (printf's
// %-{w+1}.{w}s).
func col(s string, w int) string {
	if len(s) > w {
		s = s[:w]
	}
	return s + strings.Repeat(" ", w+1-len(s))
}

func idDetails(sb *strings.Builder, id uint64, hello, maxAge, fwd int) {
	fmt.Fprintf(sb, "  stp-priority  %d\n", id>>48)
	m := id & macBits
	fmt.Fprintf(sb, "  stp-system-id   %02x:%02x:%02x:%02x:%02x:%02x\n",
		byte(m>>40), byte(m>>32), byte(m>>24), byte(m>>16), byte(m>>8), byte(m))
	fmt.Fprintf(sb, "  stp-hello-time  %ds\n", ticksToMS(hello)/1000)
	fmt.Fprintf(sb, "  stp-max-age     %ds\n", ticksToMS(maxAge)/1000)
	fmt.Fprintf(sb, "  stp-fwd-delay   %ds\n", ticksToMS(fwd)/1000)
}

// Show appends the bridge's stp/show text to sb.
func (b *Bridge) Show(sb *strings.Builder) {
	b.lock()
	defer b.unlock()
	fmt.Fprintf(sb, "---- %s ----\n", b.name)
	sb.WriteString("Root ID:\n")
	idDetails(sb, b.designatedRoot, b.bridgeHello, b.bridgeMaxAge, b.bridgeFwd)
	if b.isRoot() {
		sb.WriteString("  This bridge is the root\n")
	} else {
		fmt.Fprintf(sb, "  root-port       %s\n", b.root.name)
		fmt.Fprintf(sb, "  root-path-cost  %d\n", b.rootPathCost)
	}
	sb.WriteString("\nBridge ID:\n")
	idDetails(sb, b.bridgeID, b.helloTime, b.maxAge, b.fwdDelay)
	sb.WriteString("\n")
	fmt.Fprintf(sb, "  %s%s%s%s%s\n", col("Interface", 10), col("Role", 10), col("State", 10), col("Cost", 5), col("Pri.Nbr", 7))
	sb.WriteString("  ---------- ---------- ---------- ----- -------\n")
	for i := range b.ports {
		p := &b.ports[i]
		if p.state == Disabled {
			continue
		}
		fmt.Fprintf(sb, "  %s%s%s%-6d%d.%d\n", col(p.name, 10), col(p.role().String(), 10), col(p.state.String(), 10),
			p.pathCost, p.id>>8, p.id&0xff)
	}
	sb.WriteString("\n")
}
