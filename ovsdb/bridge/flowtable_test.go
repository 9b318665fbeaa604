package bridge

import (
	"reflect"
	"testing"

	"github.com/gvs-project/gvs/ovsdb/client"
	"github.com/gvs-project/gvs/ovsdb/vswitch"
)

func TestParseFlowTablesReadsTheReferencedRows(t *testing.T) {
	c := serveSchema(t, vswitch.SchemaJSON)
	// What `ovs-vsctl -- --id=@t0 create Flow_Table name=main -- --id=@t1
	// create Flow_Table flow-limit=4 overflow-policy=evict
	// groups='"NXM_OF_IN_PORT[]"' -- set bridge br0
	// flow_tables={0=@t0,1=@t1}` makes.
	txn := c.Txn("Open_vSwitch").
		Insert("Flow_Table", "t0", map[string]any{"name": "main"}).
		Insert("Flow_Table", "t1", map[string]any{"flow_limit": 4, "overflow_policy": "evict",
			"groups": []string{"NXM_OF_IN_PORT[]"}}).
		Insert("Bridge", "b0", map[string]any{"name": "br0", "flow_tables": map[int64]any{
			0: client.NamedUUID("t0"), 1: client.NamedUUID("t1")}}).
		Insert("Bridge", "b1", map[string]any{"name": "br1"}).
		Insert("Open_vSwitch", "", map[string]any{"bridges": []any{client.NamedUUID("b0"), client.NamedUUID("b1")}})
	cfg := parseFlowExportAfter(t, c, txn, 2)
	want := map[int64]FlowTableConfig{
		0: {Name: "main", FlowLimit: -1},
		1: {FlowLimit: 4, OverflowPolicy: "evict", Groups: []string{"NXM_OF_IN_PORT[]"}},
	}
	if got := cfg.Bridges[0].FlowTables; !reflect.DeepEqual(got, want) {
		t.Fatalf("br0 flow tables %+v, want %+v", got, want)
	}
	if got := cfg.Bridges[1].FlowTables; got != nil {
		t.Fatalf("br1 flow tables %+v, want none", got)
	}
}

func TestBridgeLevelEqualComparesFlowTables(t *testing.T) {
	a := BridgeConfig{FlowTables: map[int64]FlowTableConfig{0: {FlowLimit: 4, Groups: []string{"NXM_OF_IN_PORT[]"}}}}
	b := BridgeConfig{FlowTables: map[int64]FlowTableConfig{0: {FlowLimit: 4, Groups: []string{"NXM_OF_IN_PORT[]"}}}}
	if !bridgeLevelEqual(&a, &b) {
		t.Fatal("equal flow tables compare unequal")
	}
	b.FlowTables[0] = FlowTableConfig{FlowLimit: 7}
	if bridgeLevelEqual(&a, &b) {
		t.Fatal("a changed flow limit compares equal")
	}
}
