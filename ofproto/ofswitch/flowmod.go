package ofswitch

import (
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/oftable"
	"github.com/gvs-project/gvs/ofproto/xlate"
)

// fmDecoder turns wire flow_mods into the tables' form
// (oftable.FlowMod) and checks them as Open vSwitch does before applying
// them: the bridge's TLV table for tun_metadata, the version's action
// rules, the groups and meters that actions use.
type fmDecoder struct {
	xl     *xlate.Xlator
	groups *groupTable
	// debugActions is Config.DebugActions.
	debugActions bool
	// hooks learns of a learn with delete_learned before its rule is
	// committed (learncookies.go); nil in tests that need no counting.
	hooks *commitHooks
	// share returns the tables' shared copy of an action list
	// (oftable's ShareActions); nil shares nothing.
	share func(acts []ofp.Action, version uint8, wire []byte) []ofp.Action
}

// decode turns a wire flow_mod into the tables' version-independent
// form, with Open vSwitch's cookie rules per version
// (ofputil_decode_flow_mod).
func (d *fmDecoder) decode(out *oftable.FlowMod, fm *ofp.FlowMod, v uint8, st *connState) error {
	if err := d.decodeNoGroups(out, fm, v, st); err != nil {
		return err
	}
	return d.checkGroups(out)
}

// checkGroups refuses an add or modify whose actions use a group
// that does not exist.
func (d *fmDecoder) checkGroups(fm *oftable.FlowMod) error {
	return d.checkGroupsIn(fm, d.xl.Groups())
}

// checkGroupsIn is checkGroups against group table groups (a
// bundle's staged one).
func (d *fmDecoder) checkGroupsIn(fm *oftable.FlowMod, groups map[uint32]*xlate.Group) error {
	switch fm.Command {
	case ofp.FlowAdd, ofp.FlowModify, ofp.FlowModifyStrict:
		return d.groups.checkGroupRefsIn(fm.Actions, groups)
	}
	return nil
}

// decodeNoGroups decodes and validates a flow_mod into out
// (overwritten whole) except for its group references, which a bundle
// checks at commit (after its own group mods).
func (d *fmDecoder) decodeNoGroups(out *oftable.FlowMod, fm *ofp.FlowMod, v uint8, st *connState) error {
	*out = oftable.FlowMod{
		Command: fm.Command, Table: fm.TableID, Match: fm.Match, Priority: fm.Priority,
		IdleTimeout: fm.IdleTimeout, HardTimeout: fm.HardTimeout, Importance: fm.Importance,
		Flags: fm.Flags, OutGroup: fm.OutGroup, NewCookie: oftable.CookieUnchanged,
	}
	switch fm.Format {
	case ofp.FormatOF10, ofp.FormatNXM:
		if !st.X.tableIDExt {
			out.Table = 0xff
		}
		out.OutPort = oftable.PortAny
		if fm.OutPort != ofp.PortAny16 {
			out.OutPort = uint32(xlate.Port16(fm.OutPort))
		}
		out.OutGroup = oftable.GroupAny
		if fm.Format == ofp.FormatNXM {
			out.Cookie, out.CookieMask = fm.CookieMatch, fm.CookieMask
		}
		if fm.Command == ofp.FlowAdd || fm.Cookie != ^uint64(0) {
			out.NewCookie = fm.Cookie
		}
		out.ModifyMayAdd = out.CookieMask == 0 && out.NewCookie != oftable.CookieUnchanged
	default:
		out.OutPort = oftable.PortAny
		if fm.OutPort != ofp.PortAny {
			out.OutPort = uint32(xlate.Port16(fm.OutPort))
		}
		isModify := fm.Command == ofp.FlowModify || fm.Command == ofp.FlowModifyStrict
		if fm.Command == ofp.FlowAdd || (v == 2 && isModify && fm.CookieMask == 0) {
			// An OpenFlow 1.1 modify without a cookie mask adds a rule
			// with the cookie when it selects none, and leaves the
			// cookies of those it selects (Open vSwitch's modify_cookie
			// is false).
			out.NewCookie = fm.Cookie
			out.ModifyMayAdd = isModify
			out.AddOnlyCookie = isModify
		} else {
			out.Cookie, out.CookieMask = fm.Cookie, fm.CookieMask
		}
	}
	// Before OpenFlow 1.3 an add implied reset_counts; Open vSwitch
	// records the flag.
	if v < 4 && fm.Command == ofp.FlowAdd {
		out.Flags |= oftable.FlagResetCounts
	}
	if fm.Command == ofp.FlowAdd && fm.TableID == 0xff && fm.Format == ofp.FormatOXM {
		return &ofp.Error{Code: ofp.OFPBRC_BAD_TABLE_ID}
	}
	// tun_metadata moves into the layout of the bridge's TLV table, where
	// packets carry it; a field the table does not map is refused.
	if err := out.Match.Relayout(d.xl.Snapshot().TunMap); err != nil {
		return &ofp.Error{Code: ofp.NXFMFC_INVALID_TLV_FIELD, Err: err}
	}
	acts, err := d.ofpacts(fm.Instructions, v, fm.Format == ofp.FormatOXM)
	if err != nil {
		return err
	}
	if d.hooks != nil && len(learnTargets(acts)) > 0 {
		d.hooks.enableCookies()
	}
	if fm.Command == ofp.FlowAdd || fm.Command == ofp.FlowModify || fm.Command == ofp.FlowModifyStrict {
		table := out.Table
		if table == 0xff {
			table = 0
		}
		if err := ofp.ValidateOfpactsVersion(v, acts, &fm.Match, uint32(xlate.PortMax), table, 255); err != nil {
			return err
		}
	}
	if d.share != nil {
		// Rules of one logical flow carry the same actions: one copy
		// serves them all, from the bundle that holds them to the
		// tables.
		acts = d.share(acts, v, fm.Instructions)
	}
	out.Actions = acts
	out.Conjunctions = conjunctions(acts)
	return nil
}
