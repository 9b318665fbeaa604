package ofswitch

import (
	"github.com/gvs-project/gvs/datapath/packet"
	"github.com/gvs-project/gvs/ofproto/rstp"
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

// processRSTP hands a received BPDU to the rapid spanning tree ports it
// is for (an 802.1Q tag, the padding and the LLC header taken off).
func (e *executor) processRSTP(p *packet.Packet, ports []*rstp.Port) {
	if p == nil || len(ports) == 0 {
		return
	}
	payload, ok := rstp.Payload(p.Data())
	if !ok {
		return
	}
	for _, rp := range ports {
		rp.Received(payload)
	}
	if e.stpProcessed != nil {
		e.stpProcessed()
	}
}
