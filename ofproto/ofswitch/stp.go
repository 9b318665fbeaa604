package ofswitch

import (
	"github.com/gvs-project/gvs/datapath/packet"
	"github.com/gvs-project/gvs/ofproto/stp"
)

// processSTP hands a received BPDU to the spanning tree ports it is for
// (the padding after the 802.3 length and the LLC header taken off) and
// tells the switch (Config.STPProcessed), which then updates the ports'
// states.
func (e *executor) processSTP(p *packet.Packet, ports []*stp.Port) {
	if p == nil || len(ports) == 0 {
		return
	}
	payload, ok := stp.Payload(p.Data())
	if !ok {
		return
	}
	for _, sp := range ports {
		sp.Received(payload)
	}
	if e.stpProcessed != nil {
		e.stpProcessed()
	}
}
