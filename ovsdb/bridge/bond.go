package bridge

import (
	"github.com/gvs-project/gvs/ovsdb/client"
	"github.com/gvs-project/gvs/ovsdb/model"
)

// BondStatuser is implemented by switches with bonds: the MAC of a bond's
// active member as Port.bond_active_slave holds it (ok false until the
// bond has chosen one), so that a restarted switch picks the same member.
type BondStatuser interface {
	BondActiveMember(bridge, port string) (mac string, ok bool)
}

// bondStatus adds the active members of a bridge's bonds to st.
func (r *Reconciler) bondStatus(bc *BridgeConfig, st *Status) {
	bs, ok := r.sw.(BondStatuser)
	if !ok {
		return
	}
	for _, pc := range bc.Ports {
		if len(pc.Interfaces) < 2 {
			continue
		}
		if mac, ok := bs.BondActiveMember(bc.Name, pc.Name); ok {
			if st.BondActive == nil {
				st.BondActive = map[string]string{}
			}
			st.BondActive[pc.UUID] = mac
		}
	}
}

// writeBondStatus adds to txn the Port.bond_active_slave values that
// changed.
func writeBondStatus(txn *client.Txn, snap *client.Snapshot, st *Status) {
	for id, mac := range st.BondActive {
		u, err := model.ParseUUID(id)
		if err != nil {
			continue
		}
		if row := snap.Row("Port", u); row != nil && str(row.Get("bond_active_slave")) != mac {
			txn.SetColumns("Port", u, map[string]any{"bond_active_slave": optStr(mac)})
		}
	}
}
