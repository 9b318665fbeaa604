package backer

import (
	"log/slog"
	"net"

	"github.com/gvs-project/gvs/ovsdb/bridge"
)

// applyIfaceMACs gives internal interfaces the address their
// Interface.mac asks for, as Open vSwitch's iface_set_mac does on every
// reconfiguration: not the bridge's local port (its Bridge row's hwaddr
// sets that), never a multicast address; what cannot be applied is
// logged at ERR once per value. Called with the backer's lock held.
func applyIfaceMACs(b *dpBridge, ports []bridge.PortConfig, log *slog.Logger) {
	for _, pc := range ports {
		for _, ic := range pc.Interfaces {
			p := b.ports[ic.Name]
			if ic.Type != "internal" || ic.MAC == "" || p == nil || p.dev == nil {
				continue
			}
			hw, err := net.ParseMAC(ic.MAC)
			if err != nil || len(hw) != 6 {
				continue // Open vSwitch ignores what eth_addr_from_string cannot read
			}
			var mac [6]byte
			copy(mac[:], hw)
			msg := ""
			switch {
			case p.ofport == bridge.OFPPLocal:
				msg = "interface " + ic.Name + ": ignoring mac in Interface record (use Bridge record to set local port's mac)"
			case mac[0]&1 != 0:
				msg = "interface " + ic.Name + ": cannot set MAC to multicast address"
			case p.dev.MAC() != mac:
				if err := p.dev.SetMAC(mac); err != nil {
					msg = "interface " + ic.Name + ": setting MAC failed (" + err.Error() + ")"
				}
			}
			if msg != "" && b.macErrs[ic.Name] != msg {
				if b.macErrs == nil {
					b.macErrs = map[string]string{}
				}
				b.macErrs[ic.Name] = msg
				log.Error(msg)
			}
		}
	}
}
