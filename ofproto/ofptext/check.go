package ofptext

import (
	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// errMatchInconsistent is ovs-ofctl's message when an action needs more of
// the match than the flow has (a field's prerequisites, ct without IP).
var errMatchInconsistent = errf("actions are invalid with specified match (OFPBAC_MATCH_INCONSISTENT)")

// checkActions applies the action/match consistency checks ovs-ofctl
// makes before sending a flow: fields an action reads or writes must have
// their prerequisites in the match, ct needs IPv4 or IPv6 (and TCP or UDP
// for an ALG), resubmit(...,ct) needs a valid connection in ct_state.
func checkActions(acts []ofp.Action, m *mf.Match) error {
	for i := range acts {
		a := &acts[i]
		ok := true
		switch a.Type {
		case ofp.ActSetField:
			ok = m.PrereqsOK(a.Field)
		case ofp.ActLoad:
			ok = m.PrereqsOK(a.Dst.Field)
		case ofp.ActMove:
			ok = m.PrereqsOK(a.Src.Field) && m.PrereqsOK(a.Dst.Field)
		case ofp.ActResubmit:
			ok = a.Raw != ofp.RawActNXAST_RESUBMIT_TABLE_CT || m.Satisfies(mf.PrereqCT.Expr())
		case ofp.ActCT:
			ok = isIP(m)
			if ok && a.CT.ZoneSrc.Field != nil {
				ok = m.PrereqsOK(a.CT.ZoneSrc.Field)
			}
			if ok && a.CT.Alg != 0 {
				ok = m.Mask.NwProto == 0xff && (m.Flow.NwProto == flow.IPProtoTCP || m.Flow.NwProto == flow.IPProtoUDP)
			}
			if ok {
				if err := checkActions(a.CT.Actions, m); err != nil {
					return err
				}
			}
		}
		if !ok {
			return errMatchInconsistent
		}
	}
	return nil
}

func isIP(m *mf.Match) bool {
	return m.Mask.EthType == 0xffff && (m.Flow.EthType == flow.EthTypeIPv4 || m.Flow.EthType == flow.EthTypeIPv6)
}
