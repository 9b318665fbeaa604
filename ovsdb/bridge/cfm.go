package bridge

import (
	"slices"

	"github.com/gvs-project/gvs/ovsdb/client"
)

// cfmUpdate adds to upd the Interface cfm_* columns whose values differ
// from st (Open vSwitch's iface_refresh_cfm_stats): every column empty
// without CFM; cfm_health empty while undefined, cfm_remote_opstate empty
// outside extended mode.
func cfmUpdate(row *client.Row, st *CFMStatus, upd map[string]any) {
	wantFault, wantStatus, wantFlaps, wantHealth, wantRMPs := []bool(nil), []string(nil), []int64(nil), []int64(nil), []int64(nil)
	wantOp := ""
	if st != nil {
		wantFault = []bool{st.Fault}
		wantStatus = st.FaultStatus
		wantFlaps = []int64{st.FlapCount}
		if st.Health >= 0 {
			wantHealth = []int64{st.Health}
		}
		wantRMPs = st.RemoteMPIDs
		wantOp = st.RemoteOpState
	}
	var curFault []bool
	if b, ok := boolean(row.Get("cfm_fault")); ok {
		curFault = []bool{b}
	}
	if !slices.Equal(curFault, wantFault) {
		upd["cfm_fault"] = wantFault
	}
	if !slices.Equal(sortedCopy(strs(row.Get("cfm_fault_status"))), sortedCopy(wantStatus)) {
		upd["cfm_fault_status"] = wantStatus
	}
	if !slices.Equal(ints(row.Get("cfm_flap_count")), wantFlaps) {
		upd["cfm_flap_count"] = wantFlaps
	}
	if !slices.Equal(ints(row.Get("cfm_health")), wantHealth) {
		upd["cfm_health"] = wantHealth
	}
	cur, want := ints(row.Get("cfm_remote_mpids")), slices.Clone(wantRMPs)
	slices.Sort(cur)
	slices.Sort(want)
	if !slices.Equal(cur, want) {
		upd["cfm_remote_mpids"] = wantRMPs
	}
	if str(row.Get("cfm_remote_opstate")) != wantOp {
		upd["cfm_remote_opstate"] = optStr(wantOp)
	}
}
