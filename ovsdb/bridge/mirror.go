package bridge

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/gvs-project/gvs/ovsdb/client"
	"github.com/gvs-project/gvs/ovsdb/model"
)

// MirrorConfig is one Mirror row of a bridge (Bridge.mirrors), with its
// Port references resolved to the interface names of the bridge's ports
// (gvs's ports have one interface each). Selected ports that are not on
// the bridge are left out, as Open vSwitch leaves them out.
type MirrorConfig struct {
	UUID      string
	Name      string
	SelectAll bool
	// SelectSrcPorts and SelectDstPorts are sorted interface names.
	SelectSrcPorts, SelectDstPorts []string
	// SelectVLANs is select_vlan, sorted; empty selects every VLAN.
	SelectVLANs []int64
	// OutputPort is the output port's interface name; when empty the
	// mirror floods to OutputVLAN.
	OutputPort string
	OutputVLAN int64
	// Snaplen is the most bytes of each mirrored packet sent (0: all).
	Snaplen int64
}

// MirrorConfigurer is implemented by switches that mirror ports. The
// reconciler calls it after a bridge's ports are applied whenever the
// bridge's mirrors differ from what it last applied.
type MirrorConfigurer interface {
	ConfigureMirrors(bridge string, mirrors []MirrorConfig, warnings []string)
}

// MirrorStatuser is implemented by switches that count what their
// mirrors send (Mirror.statistics).
type MirrorStatuser interface {
	// MirrorStats returns the packets and bytes sent to the mirror of
	// bridge whose row is uuid; false when the switch has no such mirror.
	MirrorStats(bridge, uuid string) (packets, bytes int64, ok bool)
}

// parseMirrors reads a Bridge row's mirrors, in UUID order (the order of
// the column's set, in which Open vSwitch creates them). Mirrors Open
// vSwitch refuses (an output port not on the bridge, no output at all)
// are left out and reported in warnings, worded as Open vSwitch logs them.
func parseMirrors(s *client.Snapshot, name string, br *client.Row, ports []PortConfig, warn *[]string) []MirrorConfig {
	ifaces := map[string][]string{} // Port row UUID -> interface names
	for _, pc := range ports {
		for _, ic := range pc.Interfaces {
			ifaces[pc.UUID] = append(ifaces[pc.UUID], ic.Name)
		}
	}
	resolve := func(d model.Datum) []string {
		var out []string
		for _, u := range uuids(d) {
			out = append(out, ifaces[u.String()]...)
		}
		if len(out) == 0 {
			return nil
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	var out []MirrorConfig
	mus := uuids(br.Get("mirrors"))
	slices.SortFunc(mus, func(a, b model.UUID) int {
		switch {
		case a.String() < b.String():
			return -1
		case a.String() > b.String():
			return 1
		}
		return 0
	})
	for _, mu := range mus {
		r := s.Row("Mirror", mu)
		if r == nil {
			continue
		}
		mc := MirrorConfig{UUID: mu.String(), Name: str(r.Get("name")), OutputVLAN: -1}
		mc.SelectAll, _ = boolean(r.Get("select_all"))
		mc.SelectSrcPorts = resolve(r.Get("select_src_port"))
		mc.SelectDstPorts = resolve(r.Get("select_dst_port"))
		if v := ints(r.Get("select_vlan")); len(v) > 0 {
			mc.SelectVLANs = v
			slices.Sort(mc.SelectVLANs)
		}
		if sl := optInt64(r.Get("snaplen")); sl != nil {
			mc.Snaplen = *sl
		}
		ov := optInt64(r.Get("output_vlan"))
		switch op := uuids(r.Get("output_port")); {
		case len(op) == 1:
			names := ifaces[op[0].String()]
			if len(names) == 0 {
				*warn = append(*warn, fmt.Sprintf("bridge %s: mirror %s outputs to port not on bridge", name, mc.Name))
				continue
			}
			mc.OutputPort = names[0]
			if ov != nil {
				*warn = append(*warn, fmt.Sprintf("bridge %s: mirror %s specifies both output port and output vlan; ignoring output vlan", name, mc.Name))
			}
		case ov != nil:
			mc.OutputVLAN = *ov
		default:
			*warn = append(*warn, fmt.Sprintf("bridge %s: mirror %s does not specify output; ignoring", name, mc.Name))
			continue
		}
		out = append(out, mc)
	}
	return out
}

// mirrorStatus adds the statistics of a bridge's mirrors to st.
func (r *Reconciler) mirrorStatus(bc *BridgeConfig, st *Status) {
	ms, ok := r.sw.(MirrorStatuser)
	if !ok {
		return
	}
	for _, mc := range bc.Mirrors {
		p, b, ok := ms.MirrorStats(bc.Name, mc.UUID)
		if !ok {
			continue
		}
		if st.Mirrors == nil {
			st.Mirrors = map[string]map[string]int64{}
		}
		st.Mirrors[mc.UUID] = map[string]int64{"tx_packets": p, "tx_bytes": b}
	}
}

// writeMirrorStats adds to txn the Mirror.statistics that changed.
func writeMirrorStats(txn *client.Txn, snap *client.Snapshot, st *Status) {
	for id, stats := range st.Mirrors {
		u, err := model.ParseUUID(id)
		if err != nil {
			continue
		}
		if row := snap.Row("Mirror", u); row != nil && !statsEqual(row.Get("statistics"), stats) {
			txn.SetColumns("Mirror", u, map[string]any{"statistics": stats})
		}
	}
}

// applyMirrors hands a bridge's mirrors to the switch when they changed.
func (r *Reconciler) applyMirrors(ab *appliedBridge, bc *BridgeConfig) {
	mc, ok := r.sw.(MirrorConfigurer)
	if !ok || reflect.DeepEqual(ab.mirrors, bc.Mirrors) {
		return
	}
	mc.ConfigureMirrors(bc.Name, bc.Mirrors, bc.MirrorWarnings)
	ab.mirrors = bc.Mirrors
}
