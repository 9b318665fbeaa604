package ofswitch

import (
	"github.com/gvs-project/gvs/datapath/packet"
	"github.com/gvs-project/gvs/ofproto/lacp"
	"github.com/gvs-project/gvs/ofproto/xlate"
)

// processLACP hands a LACPDU received on bond members to their bonds'
// LACP and tells the switch (Config.LACPProcessed), which then runs the
// bonds: a partner now in sync lets the member be enabled at once.
func (e *executor) processLACP(p *packet.Packet, members []*xlate.Port) {
	if p == nil || len(members) == 0 {
		return
	}
	payload, ok := lacp.Payload(p.Data())
	if !ok {
		return
	}
	for _, m := range members {
		m.Bundle.LACP.Process(m.Name, payload)
	}
	if e.lacpProcessed != nil {
		e.lacpProcessed()
	}
}
