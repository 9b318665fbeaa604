package bridge

import (
	"maps"
	"slices"

	"github.com/gvs-project/gvs/ovsdb/client"
	"github.com/gvs-project/gvs/ovsdb/model"
)

// FlowTableConfig is one Flow_Table row, as a Bridge's flow_tables
// references it for one OpenFlow table.
type FlowTableConfig struct {
	// Name is the table's name ("" when unset).
	Name string
	// FlowLimit is the most flows the table may hold; -1 when unset.
	FlowLimit int64
	// OverflowPolicy is "refuse" or "evict" ("" when unset: refuse).
	OverflowPolicy string
	// Groups are the eviction fairness fields, as "NXM_OF_IN_PORT[]".
	Groups []string
	// Prefixes are the fields the table's prefix tries track, as
	// written (nil when unset: the default ones).
	Prefixes []string
}

// parseFlowTables reads a Bridge row's flow_tables column; references
// to missing rows are skipped.
func parseFlowTables(s *client.Snapshot, br *client.Row) map[int64]FlowTableConfig {
	d := br.Get("flow_tables")
	if len(d.Keys) == 0 {
		return nil
	}
	out := map[int64]FlowTableConfig{}
	for i, k := range d.Keys {
		id, ok := k.(int64)
		if !ok || i >= len(d.Values) {
			continue
		}
		u, ok := d.Values[i].(model.UUID)
		if !ok {
			continue
		}
		r := s.Row("Flow_Table", u)
		if r == nil {
			continue
		}
		ft := FlowTableConfig{Name: str(r.Get("name")), FlowLimit: -1,
			OverflowPolicy: str(r.Get("overflow_policy"))}
		if g := strs(r.Get("groups")); len(g) > 0 {
			ft.Groups = g
		}
		if p := strs(r.Get("prefixes")); len(p) > 0 {
			ft.Prefixes = p
		}
		if n := optInt64(r.Get("flow_limit")); n != nil {
			ft.FlowLimit = *n
		}
		out[id] = ft
	}
	return out
}

// flowTablesEqual reports whether two flow_tables configurations are the
// same.
func flowTablesEqual(a, b map[int64]FlowTableConfig) bool {
	return maps.EqualFunc(a, b, func(x, y FlowTableConfig) bool {
		return x.Name == y.Name && x.FlowLimit == y.FlowLimit && x.OverflowPolicy == y.OverflowPolicy &&
			slices.Equal(x.Groups, y.Groups) && slices.Equal(x.Prefixes, y.Prefixes)
	})
}
