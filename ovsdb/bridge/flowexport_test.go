package bridge

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/gvs-project/gvs/ovsdb/client"
	"github.com/gvs-project/gvs/ovsdb/vswitch"
)

// parseFlowExportAfter commits txn and parses once the bridges appear.
func parseFlowExportAfter(t *testing.T, c *client.Client, txn *client.Txn, nBridges int) Config {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := txn.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	rep, err := c.Monitor(ctx, "Open_vSwitch", MonitoredTables)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := rep.WaitFor(ctx, func(s *client.Snapshot) bool { return len(s.Rows("Bridge")) == nBridges })
	if err != nil {
		t.Fatal(err)
	}
	return Parse(snap)
}

func u8(v uint8) *uint8 { return &v }

func TestParseFlowExportFillsOpenVSwitchDefaults(t *testing.T) {
	c := serveSchema(t, vswitch.SchemaJSON)
	txn := c.Txn("Open_vSwitch").
		// What `ovs-vsctl -- set Bridge br0 netflow=@nf -- --id=@nf create
		// NetFlow targets=\"127.0.0.1:2055\"` and the like make.
		Insert("NetFlow", "nf", map[string]any{"targets": []string{"127.0.0.1:2055"}}).
		Insert("sFlow", "sf", map[string]any{"targets": []string{"127.0.0.1:6343"}, "agent": []string{"lo"}}).
		Insert("IPFIX", "ipb", map[string]any{"targets": []string{"127.0.0.1:4739"}, "sampling": []int64{1},
			"obs_domain_id": []int64{7}, "obs_point_id": []int64{9},
			"other_config": map[string]string{"enable-output-sampling": "false"}}).
		Insert("IPFIX", "ipf", map[string]any{"targets": []string{"127.0.0.1:4740"}}).
		Insert("IPFIX", "ipempty", map[string]any{}).
		Insert("Bridge", "b0", map[string]any{"name": "br0", "netflow": client.NamedUUID("nf"), "sflow": client.NamedUUID("sf"),
			"ipfix": client.NamedUUID("ipb")}).
		Insert("Bridge", "b1", map[string]any{"name": "br1", "sflow": client.NamedUUID("sf"), "ipfix": client.NamedUUID("ipf")}).
		Insert("Bridge", "b2", map[string]any{"name": "br2"}).
		Insert("Flow_Sample_Collector_Set", "", map[string]any{"id": 5, "bridge": client.NamedUUID("b1"), "ipfix": client.NamedUUID("ipf")}).
		Insert("Flow_Sample_Collector_Set", "", map[string]any{"id": 6, "bridge": client.NamedUUID("b1"), "ipfix": client.NamedUUID("ipempty")}).
		Insert("Open_vSwitch", "", map[string]any{"bridges": []any{client.NamedUUID("b0"), client.NamedUUID("b1"), client.NamedUUID("b2")}})
	cfg := parseFlowExportAfter(t, c, txn, 3)
	if len(cfg.Bridges) != 3 {
		t.Fatalf("bridges: %+v", cfg.Bridges)
	}
	ipfixDefaults := func(targets ...string) IPFIXConfig {
		return IPFIXConfig{Targets: targets, TemplateInterval: 600, StatsInterval: 600,
			EnableTunnelSampling: true, EnableInputSampling: true, EnableOutputSampling: true}
	}
	b0 := ipfixDefaults("127.0.0.1:4739")
	b0.Sampling, b0.ObsDomainID, b0.ObsPointID, b0.EnableOutputSampling = 1, 7, 9, false
	want0 := &FlowExportConfig{
		NetFlow: &NetFlowConfig{Targets: []string{"127.0.0.1:2055"}, ActiveTimeout: 600},
		SFlow:   &SFlowConfig{Targets: []string{"127.0.0.1:6343"}, Agent: "lo", Sampling: 400, Polling: 30, Header: 128},
		IPFIX:   &b0,
	}
	if got := cfg.Bridges[0].FlowExport; !reflect.DeepEqual(got, want0) {
		t.Errorf("br0 flow export:\n got %+v\nwant %+v", got, want0)
	}
	// br1: an IPFIX row without sampling does no per-bridge sampling; the
	// collector set whose IPFIX row has no targets is left out; the
	// second bridge with sFlow is sub-agent 1.
	want1 := &FlowExportConfig{
		SFlow:         &SFlowConfig{Targets: []string{"127.0.0.1:6343"}, Agent: "lo", Sampling: 400, Polling: 30, Header: 128, SubID: 1},
		CollectorSets: []CollectorSetConfig{{ID: 5, IPFIX: ipfixDefaults("127.0.0.1:4740")}},
	}
	if got := cfg.Bridges[1].FlowExport; !reflect.DeepEqual(got, want1) {
		t.Errorf("br1 flow export:\n got %+v\nwant %+v", got, want1)
	}
	if got := cfg.Bridges[2].FlowExport; got != nil {
		t.Errorf("br2 flow export = %+v, want nil", got)
	}
}

func TestParseNetFlowTimeoutsAndWarnings(t *testing.T) {
	c := serveSchema(t, vswitch.SchemaJSON)
	txn := c.Txn("Open_vSwitch").
		Insert("NetFlow", "nf0", map[string]any{"targets": []string{"127.0.0.1:2055"}, "active_timeout": -1,
			"engine_type": []int64{3}, "engine_id": []int64{200}, "add_id_to_interface": true}).
		Insert("NetFlow", "nf1", map[string]any{"targets": []string{"127.0.0.1:2055"}, "active_timeout": 60}).
		Insert("Bridge", "b0", map[string]any{"name": "br0", "netflow": client.NamedUUID("nf0")}).
		Insert("Bridge", "b1", map[string]any{"name": "br1", "netflow": client.NamedUUID("nf1")}).
		Insert("Open_vSwitch", "", map[string]any{"bridges": []any{client.NamedUUID("b0"), client.NamedUUID("b1")}})
	cfg := parseFlowExportAfter(t, c, txn, 2)
	want0 := &FlowExportConfig{
		NetFlow: &NetFlowConfig{Targets: []string{"127.0.0.1:2055"}, EngineType: u8(3), EngineID: u8(200), ActiveTimeout: 600, AddIDToInterface: true},
		Warnings: []string{
			"bridge br0: active timeout interval set to negative value, using default instead (600 seconds)",
			"bridge br0: NetFlow port mangling may conflict with another vswitch, choose an engine id less than 128",
		},
	}
	if got := cfg.Bridges[0].FlowExport; !reflect.DeepEqual(got, want0) {
		t.Errorf("br0:\n got %+v\nwant %+v", got, want0)
	}
	if got := cfg.Bridges[1].FlowExport.NetFlow.ActiveTimeout; got != 60 {
		t.Errorf("br1 active timeout = %d, want 60", got)
	}
}

// feFake is a switch that also exports flows.
type feFake struct {
	*fakeSwitch
	calls []*FlowExportConfig
}

func (f *feFake) ConfigureFlowExport(bridge string, cfg *FlowExportConfig) {
	f.calls = append(f.calls, cfg)
}

func TestApplyPassesFlowExportOnlyWhenItChanges(t *testing.T) {
	sw := &feFake{fakeSwitch: newFake()}
	r := NewReconciler(sw)
	b := br("br0")
	r.Apply(&Config{NextCfg: 1, Bridges: []BridgeConfig{b}})
	if len(sw.calls) != 0 {
		t.Fatalf("no flow export configured, yet called: %v", sw.calls)
	}
	b.FlowExport = &FlowExportConfig{NetFlow: &NetFlowConfig{Targets: []string{"127.0.0.1:1"}, ActiveTimeout: 600}}
	r.Apply(&Config{NextCfg: 2, Bridges: []BridgeConfig{b}})
	// Parsed again into new values: no call.
	b2 := b
	b2.FlowExport = &FlowExportConfig{NetFlow: &NetFlowConfig{Targets: []string{"127.0.0.1:1"}, ActiveTimeout: 600}}
	r.Apply(&Config{NextCfg: 3, Bridges: []BridgeConfig{b2}})
	if len(sw.calls) != 1 || !reflect.DeepEqual(sw.calls[0], b.FlowExport) {
		t.Fatalf("calls = %v", sw.calls)
	}
	b2.FlowExport = nil
	r.Apply(&Config{NextCfg: 4, Bridges: []BridgeConfig{b2}})
	if len(sw.calls) != 2 || sw.calls[1] != nil {
		t.Fatalf("calls = %v", sw.calls)
	}
}
