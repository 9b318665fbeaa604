package xlate

import (
	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// The field family's translation (see package ofp's actions_field.go):
// set_field, load, move and delete_field (of a tun_metadata field: the
// Geneve option is no longer present). The changes
// stay in the translated flow until a commit (fields.go).

func init() {
	registerHooks(map[ofp.ActionType]actionHook{
		ofp.ActSetField:    func(c *ctx, a *ofp.Action) { c.setField(a.Field, a.Value, a.Mask) },
		ofp.ActLoad:        load,
		ofp.ActMove:        move,
		ofp.ActDeleteField: deleteField,
	})
	registerProps(map[ofp.ActionType]kindProps{
		ofp.ActSetField: {setOrMove: true, needsL3: func(a *ofp.Action) bool { return a.Field != nil && a.Field.ID >= mf.IDIPv4Src }},
		ofp.ActLoad:     {setOrMove: true, needsL3: func(a *ofp.Action) bool { return a.Dst.Field != nil && a.Dst.Field.ID >= mf.IDIPv4Src }},
		ofp.ActMove:     {setOrMove: true},
	})
}

// deleteField is delete_field: a tun_metadata option is no longer
// present, so output to a Geneve tunnel leaves it out
// (tun_metadata_delete).
func deleteField(c *ctx, a *ofp.Action) {
	if a.Field == nil {
		return
	}
	if id := a.Field.ID; id >= mf.IDTunMetadata0 && id < mf.IDTunMetadata0+64 {
		c.flow.Key.TunMetaPresent &^= 1 << (id - mf.IDTunMetadata0)
	}
	c.tr.notef("delete %s", a.Field.Name)
}
