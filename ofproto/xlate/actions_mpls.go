package xlate

import (
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// The MPLS family's translation (see package ofp's actions_mpls.go and
// mpls.go for the implementation): push_mpls, pop_mpls, set_mpls_label,
// set_mpls_tc, set_mpls_ttl and dec_mpls_ttl. dec_nsh_ttl has no hook: it
// fails translation (ErrUnsupported).

func init() {
	registerHooks(map[ofp.ActionType]actionHook{
		ofp.ActPushMPLS: func(c *ctx, a *ofp.Action) { c.mpls.push(uint16(a.Arg)) },
		ofp.ActPopMPLS:  func(c *ctx, a *ofp.Action) { c.mpls.pop(uint16(a.Arg)) },
		ofp.ActSetMPLSLabel: func(c *ctx, a *ofp.Action) {
			c.mpls.setBits(uint32(a.Arg)<<odp.MPLSLabelShift, odp.MPLSLabelMask)
		},
		ofp.ActSetMPLSTC: func(c *ctx, a *ofp.Action) {
			c.mpls.setBits(uint32(a.Arg)<<odp.MPLSTCShift, odp.MPLSTCMask)
		},
		ofp.ActSetMPLSTTL: func(c *ctx, a *ofp.Action) { c.mpls.setBits(uint32(a.Arg), odp.MPLSTTLMask) },
		ofp.ActDecMPLSTTL: func(c *ctx, _ *ofp.Action) { c.stopList = c.mpls.decTTL() },
	})
	registerProps(map[ofp.ActionType]kindProps{
		ofp.ActPopMPLS:      {slot: 2},
		ofp.ActPushMPLS:     {slot: 3},
		ofp.ActDecMPLSTTL:   {slot: 6},
		ofp.ActDecNSHTTL:    {slot: 7, irreversible: true},
		ofp.ActSetMPLSLabel: {setOrMove: true},
		ofp.ActSetMPLSTC:    {setOrMove: true},
		ofp.ActSetMPLSTTL:   {setOrMove: true},
	})
}
