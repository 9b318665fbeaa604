package xlate

import "github.com/gvs-project/gvs/ofproto/ofp"

// The pipeline family's translation (see package ofp's
// actions_pipeline.go): resubmit (xlate.go), goto_table, write_metadata,
// write_actions and clear_actions (the action set, actset.go), meter
// (meter.go) and exit.

func init() {
	registerHooks(map[ofp.ActionType]actionHook{
		ofp.ActResubmit:  resubmit,
		ofp.ActGotoTable: func(c *ctx, a *ofp.Action) { c.lookupTable(a.Table, c.last) },
		ofp.ActWriteMetadata: func(c *ctx, a *ofp.Action) {
			c.flow.Metadata = c.flow.Metadata&^a.Arg2 | a.Arg&a.Arg2
		},
		ofp.ActWriteActions: func(c *ctx, a *ofp.Action) { c.aset.write(a.Nested) },
		ofp.ActClearActions: func(c *ctx, _ *ofp.Action) { c.aset.clear() },
		ofp.ActMeter:        meter,
		ofp.ActExit:         func(c *ctx, _ *ofp.Action) { c.exit = true },
	})
	registerProps(map[ofp.ActionType]kindProps{
		ofp.ActResubmit: {final: 3},
		ofp.ActMeter:    {irreversible: true},
	})
}
