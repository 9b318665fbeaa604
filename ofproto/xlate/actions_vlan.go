package xlate

import (
	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// The VLAN family's translation (see package ofp's actions_vlan.go):
// push_vlan, strip_vlan/pop_vlan, mod_vlan_vid and mod_vlan_pcp. NORMAL's
// VLAN handling is in vlan.go.

func init() {
	registerHooks(map[ofp.ActionType]actionHook{
		ofp.ActPushVLAN: func(c *ctx, a *ofp.Action) {
			k := &c.flow.Key
			c.wc.Key.VLANs[0].TCI |= 0xffff
			k.VLANs[1] = k.VLANs[0]
			k.VLANs[0] = flow.VLAN{TPID: uint16(a.Arg), TCI: k.VLANs[1].TCI | flow.VLANCFI}
		},
		ofp.ActStripVLAN: func(c *ctx, _ *ofp.Action) {
			k := &c.flow.Key
			c.wc.Key.VLANs[0].TCI |= flow.VLANCFI
			k.VLANs[0], k.VLANs[1] = k.VLANs[1], flow.VLAN{}
		},
		ofp.ActSetVLANVID: setVLAN,
		ofp.ActSetVLANPCP: setVLAN,
	})
	registerProps(map[ofp.ActionType]kindProps{
		ofp.ActStripVLAN:  {slot: 1},
		ofp.ActPushVLAN:   {slot: 4},
		ofp.ActSetVLANVID: {setOrMove: true, needsL3: belowL3},
		ofp.ActSetVLANPCP: {setOrMove: true, needsL3: belowL3},
	})
}

// setVLAN implements mod_vlan_vid and mod_vlan_pcp (OpenFlow 1.0 pushes a
// tag when the packet has none).
func setVLAN(c *ctx, a *ofp.Action) {
	k, w := &c.flow.Key, &c.wc.Key
	w.VLANs[0].TCI |= flow.VLANCFI
	if k.VLANs[0].TCI&flow.VLANCFI == 0 {
		if !a.PushVLANIfNeeded {
			return
		}
		k.VLANs[1] = k.VLANs[0]
		k.VLANs[0] = flow.VLAN{TPID: flow.EthTypeVLAN, TCI: flow.VLANCFI}
	}
	if a.Type == ofp.ActSetVLANVID {
		w.VLANs[0].TCI |= 0x0fff
		k.VLANs[0].TCI = k.VLANs[0].TCI&^0x0fff | uint16(a.Arg)&0x0fff
	} else {
		w.VLANs[0].TCI |= 0xe000
		k.VLANs[0].TCI = k.VLANs[0].TCI&^0xe000 | uint16(a.Arg)<<13
	}
}
