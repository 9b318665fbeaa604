package xlate

import "github.com/gvs-project/gvs/ofproto/ofp"

// The field family's translation (see package ofp's actions_field.go):
// set_field, load, move and delete_field (no effect here). The changes
// stay in the translated flow until a commit (fields.go).

func init() {
	registerHooks(map[ofp.ActionType]actionHook{
		ofp.ActSetField:    func(c *ctx, a *ofp.Action) { c.setField(a.Field, a.Value, a.Mask) },
		ofp.ActLoad:        (*ctx).load,
		ofp.ActMove:        (*ctx).move,
		ofp.ActDeleteField: noEffect,
	})
}
