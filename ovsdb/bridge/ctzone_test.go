package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"reflect"
	"testing"
	"time"

	"github.com/gvs-project/gvs/ovsdb/client"
	"github.com/gvs-project/gvs/ovsdb/model"
	"github.com/gvs-project/gvs/ovsdb/server"
	"github.com/gvs-project/gvs/ovsdb/vswitch"
)

// serveSchema serves an in-memory database of schema over a pipe and
// returns a client connected to it.
func serveSchema(t *testing.T, schemaJSON []byte) *client.Client {
	t.Helper()
	s, err := model.ParseSchema(schemaJSON)
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New()
	if err := srv.AddDatabase(server.NewDatabase(s)); err != nil {
		t.Fatal(err)
	}
	a, b := net.Pipe()
	srv.ServeConn(a)
	c := client.NewClient(b)
	t.Cleanup(func() {
		c.Close()
		srv.Close()
	})
	return c
}

// ctZoneTxn inserts what `ovs-vsctl add-zone-tp netdev zone=5
// udp_first=3 udp_single=3 tcp_unack=9` followed by `ovs-vsctl add-zone-tp
// system zone=6 icmp_first=7` makes, plus a zone 7 without a policy (as
// OVN creates before it sets one), with extra CT_Zone columns.
func ctZoneTxn(c *client.Client, zone5, dpNetdev map[string]any) *client.Txn {
	z5 := map[string]any{"timeout_policy": client.NamedUUID("tp5")}
	for k, v := range zone5 {
		z5[k] = v
	}
	dpn := map[string]any{"ct_zones": map[int64]any{5: client.NamedUUID("z5"), 7: client.NamedUUID("z7")}}
	for k, v := range dpNetdev {
		dpn[k] = v
	}
	return c.Txn("Open_vSwitch").
		Insert("CT_Timeout_Policy", "tp5", map[string]any{"timeouts": map[string]int64{"udp_first": 3, "udp_single": 3, "tcp_unack": 9}}).
		Insert("CT_Timeout_Policy", "tp6", map[string]any{"timeouts": map[string]int64{"icmp_first": 7}}).
		Insert("CT_Zone", "z5", z5).
		Insert("CT_Zone", "z6", map[string]any{"timeout_policy": client.NamedUUID("tp6")}).
		Insert("CT_Zone", "z7", map[string]any{"external_ids": map[string]string{"owner": "ovn"}}).
		Insert("Datapath", "dpn", dpn).
		Insert("Datapath", "dps", map[string]any{"ct_zones": map[int64]any{6: client.NamedUUID("z6")}}).
		Insert("Open_vSwitch", "", map[string]any{"next_cfg": 3,
			"datapaths": map[string]any{"netdev": client.NamedUUID("dpn"), "system": client.NamedUUID("dps")}})
}

// parseAfter commits txn, monitors as the bridge layer does and parses.
func parseAfter(t *testing.T, c *client.Client, txn *client.Txn) Config {
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
	snap, err := rep.WaitFor(ctx, func(s *client.Snapshot) bool { return len(s.Rows("CT_Zone")) == 3 })
	if err != nil {
		t.Fatal(err)
	}
	return Parse(snap)
}

func i64(v int64) *int64 { return &v }

func TestParseReadsZoneTimeoutPoliciesPerDatapathType(t *testing.T) {
	c := serveSchema(t, vswitch.SchemaJSON)
	cfg := parseAfter(t, c, ctZoneTxn(c, nil, nil))
	want := map[string]DatapathConfig{
		"netdev": {Zones: map[uint16]ZoneConfig{
			5: {TimeoutPolicy: map[string]int64{"udp_first": 3, "udp_single": 3, "tcp_unack": 9}},
			7: {},
		}},
		"system": {Zones: map[uint16]ZoneConfig{6: {TimeoutPolicy: map[string]int64{"icmp_first": 7}}}},
	}
	if !reflect.DeepEqual(cfg.Datapaths, want) {
		t.Fatalf("Datapaths = %#v\nwant %#v", cfg.Datapaths, want)
	}
	if cfg.NextCfg != 3 {
		t.Errorf("NextCfg = %d", cfg.NextCfg)
	}
}

// schemaWithZoneLimits is Open vSwitch 3.1's schema with the columns
// 3.2 added for zone limits.
func schemaWithZoneLimits(t *testing.T) []byte {
	t.Helper()
	var s map[string]any
	if err := json.Unmarshal(vswitch.SchemaJSON, &s); err != nil {
		t.Fatal(err)
	}
	limit := map[string]any{"type": map[string]any{
		"key": map[string]any{"type": "integer", "minInteger": 0, "maxInteger": 4294967295}, "min": 0, "max": 1}}
	tables := s["tables"].(map[string]any)
	tables["CT_Zone"].(map[string]any)["columns"].(map[string]any)["limit"] = limit
	tables["Datapath"].(map[string]any)["columns"].(map[string]any)["ct_zone_default_limit"] = limit
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseReadsZoneLimitsWhenTheSchemaHasThem(t *testing.T) {
	c := serveSchema(t, schemaWithZoneLimits(t))
	cfg := parseAfter(t, c, ctZoneTxn(c, map[string]any{"limit": 10}, map[string]any{"ct_zone_default_limit": 0}))
	want := map[string]DatapathConfig{
		"netdev": {DefaultZoneLimit: i64(0), Zones: map[uint16]ZoneConfig{
			5: {TimeoutPolicy: map[string]int64{"udp_first": 3, "udp_single": 3, "tcp_unack": 9}, Limit: i64(10)},
			7: {},
		}},
		"system": {Zones: map[uint16]ZoneConfig{6: {TimeoutPolicy: map[string]int64{"icmp_first": 7}}}},
	}
	if !reflect.DeepEqual(cfg.Datapaths, want) {
		t.Fatalf("Datapaths = %#v\nwant %#v", cfg.Datapaths, want)
	}
}

// ctFake is a switch that also configures conntrack.
type ctFake struct {
	*fakeSwitch
	ctCalls [][2]map[string]DatapathConfig
	fail    error
}

func (f *ctFake) ConfigureConntrack(prev, next map[string]DatapathConfig) error {
	f.ctCalls = append(f.ctCalls, [2]map[string]DatapathConfig{prev, next})
	return f.fail
}

func TestApplyPassesZoneChangesOnlyWhenTheyChange(t *testing.T) {
	sw := &ctFake{fakeSwitch: newFake()}
	r := NewReconciler(sw)
	r.Apply(&Config{NextCfg: 1})
	if len(sw.ctCalls) != 0 {
		t.Fatalf("no zones configured, yet ConfigureConntrack called: %v", sw.ctCalls)
	}
	a := map[string]DatapathConfig{"netdev": {Zones: map[uint16]ZoneConfig{5: {TimeoutPolicy: map[string]int64{"udp_first": 3}}}}}
	r.Apply(&Config{NextCfg: 2, Datapaths: a})
	// The same zones parsed again (new maps, equal contents): no call.
	a2 := map[string]DatapathConfig{"netdev": {Zones: map[uint16]ZoneConfig{5: {TimeoutPolicy: map[string]int64{"udp_first": 3}}}}}
	r.Apply(&Config{NextCfg: 3, Datapaths: a2})
	if len(sw.ctCalls) != 1 || sw.ctCalls[0][0] != nil || !reflect.DeepEqual(sw.ctCalls[0][1], a) {
		t.Fatalf("calls = %v", sw.ctCalls)
	}
	b := map[string]DatapathConfig{"netdev": {Zones: map[uint16]ZoneConfig{5: {TimeoutPolicy: map[string]int64{"udp_first": 4}}}}}
	sw.fail = errors.New("boom")
	st := r.Apply(&Config{NextCfg: 4, Datapaths: b})
	if st.ConntrackErr == nil || st.CurCfg != 4 {
		t.Fatalf("status after a failing ConfigureConntrack = %+v", st)
	}
	// Retried with the same prev, since nothing new was applied.
	sw.fail = nil
	if st := r.Apply(&Config{NextCfg: 5, Datapaths: b}); st.ConntrackErr != nil {
		t.Fatal(st.ConntrackErr)
	}
	if len(sw.ctCalls) != 3 || !reflect.DeepEqual(sw.ctCalls[2][0], a) || !reflect.DeepEqual(sw.ctCalls[2][1], b) {
		t.Fatalf("calls = %v", sw.ctCalls)
	}
	// The Datapath row removed: prev b, next nothing.
	r.Apply(&Config{NextCfg: 6})
	if len(sw.ctCalls) != 4 || !reflect.DeepEqual(sw.ctCalls[3][0], b) || len(sw.ctCalls[3][1]) != 0 {
		t.Fatalf("calls = %v", sw.ctCalls)
	}
}

func TestZoneConfigEqualTreatsNoPolicyAndEmptyPolicyAlike(t *testing.T) {
	cases := []struct {
		a, b ZoneConfig
		eq   bool
	}{
		{ZoneConfig{}, ZoneConfig{TimeoutPolicy: map[string]int64{}}, true},
		{ZoneConfig{Limit: i64(3)}, ZoneConfig{Limit: i64(3)}, true},
		{ZoneConfig{Limit: i64(3)}, ZoneConfig{}, false},
		{ZoneConfig{Limit: i64(0)}, ZoneConfig{Limit: i64(3)}, false},
		{ZoneConfig{TimeoutPolicy: map[string]int64{"udp_first": 1}}, ZoneConfig{TimeoutPolicy: map[string]int64{"udp_first": 2}}, false},
	}
	for i, c := range cases {
		if got := c.a.Equal(c.b); got != c.eq {
			t.Errorf("case %d: Equal = %v, want %v", i, got, c.eq)
		}
	}
}

func TestApplyPassesZonesAgainWhenABridgeBringsUpANewDatapathType(t *testing.T) {
	sw := &ctFake{fakeSwitch: newFake()}
	r := NewReconciler(sw)
	a := map[string]DatapathConfig{"netdev": {Zones: map[uint16]ZoneConfig{5: {Limit: i64(3)}}}}
	r.Apply(&Config{NextCfg: 1, Datapaths: a})
	nd := br("br0")
	nd.DatapathType = "netdev"
	r.Apply(&Config{NextCfg: 2, Datapaths: a, Bridges: []BridgeConfig{nd}})
	r.Apply(&Config{NextCfg: 3, Datapaths: a, Bridges: []BridgeConfig{nd}})
	if len(sw.ctCalls) != 2 || !reflect.DeepEqual(sw.ctCalls[1][0], a) || !reflect.DeepEqual(sw.ctCalls[1][1], a) {
		t.Fatalf("calls = %v", sw.ctCalls)
	}
	// Zones gone: one call to reset them; with none configured, bridge
	// type changes do not call.
	r.Apply(&Config{NextCfg: 4, Bridges: []BridgeConfig{nd}})
	du := br("br1")
	du.DatapathType = "dummy"
	r.Apply(&Config{NextCfg: 5, Bridges: []BridgeConfig{nd, du}})
	if len(sw.ctCalls) != 3 || !reflect.DeepEqual(sw.ctCalls[2][0], a) || sw.ctCalls[2][1] != nil {
		t.Fatalf("calls = %v", sw.ctCalls)
	}
}
