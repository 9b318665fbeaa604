package bridge

import (
	"maps"

	"github.com/gvs-project/gvs/ovsdb/client"
)

// STPConfigurer is implemented by switches that run the spanning tree:
// ConfigureSTP is called once a reconciliation has applied every
// bridge's ports (PortConfigurer), so that the switch configures all the
// bridges' trees at once, in its own bridge order, as Open vSwitch's
// bridge_reconfigure runs bridge_configure_stp over its bridges.
type STPConfigurer interface {
	ConfigureSTP()
}

// STPStatuser is implemented by switches that run the spanning tree
// (Bridge.stp_enable): what they report goes to the Bridge status column
// and the Port status and statistics columns, as Open vSwitch's
// br_refresh_stp_status, port_refresh_stp_status and
// port_refresh_stp_stats write them.
type STPStatuser interface {
	// STPStatus returns the bridge's status keys (stp_bridge_id,
	// stp_designated_root, stp_root_path_cost), nil when it runs no
	// spanning tree, and each port's, by port name, that takes part.
	STPStatus(bridge string) (map[string]string, map[string]PortSTPStatus)
}

// RSTPStatuser is STPStatuser for the rapid spanning tree
// (Bridge.rstp_enable): the Bridge rstp_status column and the Port
// rstp_status and rstp_statistics columns.
type RSTPStatuser interface {
	RSTPStatus(bridge string) (map[string]string, map[string]PortSTPStatus)
}

// PortSTPStatus is a port's spanning tree status (stp_port_id,
// stp_state, stp_sec_in_state, stp_role) and statistics (stp_tx_count,
// stp_rx_count, stp_error_count).
type PortSTPStatus struct {
	Status map[string]string
	Stats  map[string]int64
}

// writeSTPStatus adds to txn the Bridge status and Port status and
// statistics that differ from what the switch reports: empty for a
// bridge without spanning tree and for ports outside it.
func (r *Runner) writeSTPStatus(txn *client.Txn, snap *client.Snapshot) {
	if ss, ok := r.rec.sw.(STPStatuser); ok {
		writeTreeStatus(txn, snap, ss.STPStatus, "status", "status", "statistics")
	}
	if rs, ok := r.rec.sw.(RSTPStatuser); ok {
		writeTreeStatus(txn, snap, rs.RSTPStatus, "rstp_status", "rstp_status", "rstp_statistics")
	}
}

// writeTreeStatus writes one tree's columns: brCol of the Bridge rows,
// statusCol and statsCol of their Port rows.
func writeTreeStatus(txn *client.Txn, snap *client.Snapshot, get func(string) (map[string]string, map[string]PortSTPStatus),
	brCol, statusCol, statsCol string) {
	for _, br := range snap.Rows("Bridge") {
		bst, ports := get(str(br.Get("name")))
		if bst == nil {
			bst = map[string]string{}
		}
		if !maps.Equal(strMap(br.Get(brCol)), bst) {
			txn.SetColumns("Bridge", br.UUID, map[string]any{brCol: bst})
		}
		for _, pu := range uuids(br.Get("ports")) {
			pr := snap.Row("Port", pu)
			if pr == nil {
				continue
			}
			ps := ports[str(pr.Get("name"))]
			want, wantStats := ps.Status, ps.Stats
			if want == nil {
				want = map[string]string{}
			}
			if wantStats == nil {
				wantStats = map[string]int64{}
			}
			upd := map[string]any{}
			if !maps.Equal(strMap(pr.Get(statusCol)), want) {
				upd[statusCol] = want
			}
			if !statsEqual(pr.Get(statsCol), wantStats) {
				upd[statsCol] = wantStats
			}
			if len(upd) > 0 {
				txn.SetColumns("Port", pu, upd)
			}
		}
	}
}
