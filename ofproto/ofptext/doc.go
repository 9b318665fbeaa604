// Package ofptext owns the ovs-ofctl text syntax for flows: ParseFlow turns
// a flow string ("table=1,priority=100,ip,reg0=0x1/0x1 actions=ct(table=2)")
// into a Flow (flow-mod header, an mf.Match and typed ofp.Actions) and
// FormatFlow / FormatFlowMod print a Flow exactly as `ovs-ofctl dump-flows
// --no-stats` and `ovs-ofctl parse-flows` do, including the OpenFlow version
// normalisation ovs-ofctl applies (load and set_field spellings, legacy
// field names, prerequisite wiping).
//
// ParseGroupMod and ParseMeterMod parse ovs-ofctl's group and meter syntax
// ("group_id=1,type=select,bucket=weight:2,actions=output:1",
// "meter=1,kbps,band=type=drop,rate=100") into ofp.GroupMod and
// ofp.MeterMod, with ovs-ofctl's checks and messages and the OpenFlow
// versions that can carry the result; FormatGroupMod, FormatGroupDesc,
// FormatMeterMod and FormatMeterConfig print them as ovs-ofctl's ofp-print,
// dump-groups and dump-meters do. Bucket actions use the flow action
// parser.
//
// Actions are parsed and printed through two tables that the action
// family files (actions_FAMILY.go, one per family as in package ofp; see
// its "Adding an action") fill in: parsers by lower-cased action name and
// formatters by ofp.ActionType.
//
// Field syntax is driven by the meta-flow table in ofproto/mf: every field
// name, alias and NXM/OXM name that mf knows is accepted, with the value
// format mf records for it.
//
// # Imports
//
// ofptext imports ofproto/mf, ofproto/ofp, datapath/flow and the standard
// library. It must not import the switch (ofproto) or the channel layer:
// it is a pure text codec used by cmd/gvs-ofctl and by tests.
package ofptext
