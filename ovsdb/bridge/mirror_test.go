package bridge

import (
	"reflect"
	"testing"

	"github.com/gvs-project/gvs/ovsdb/client"
	"github.com/gvs-project/gvs/ovsdb/vswitch"
)

func TestParseMirrorsResolvesPortsAndRefusesWhatOpenVSwitchRefuses(t *testing.T) {
	c := serveSchema(t, vswitch.SchemaJSON)
	nu := func(n string) client.NamedUUID { return client.NamedUUID(n) }
	txn := c.Txn("Open_vSwitch")
	for _, n := range []string{"p1", "p2", "p3", "q1"} {
		txn.Insert("Interface", "i"+n, map[string]any{"name": n, "type": "dummy"}).
			Insert("Port", n, map[string]any{"name": n, "interfaces": nu("i" + n)})
	}
	txn.Insert("Mirror", "src", map[string]any{"name": "src", "select_src_port": nu("p1"), "select_dst_port": []any{nu("p2"), nu("q1")},
		"select_vlan": []any{int64(11), int64(10)}, "output_port": nu("p3"), "output_vlan": []int64{5}, "snaplen": []int64{100}}).
		Insert("Mirror", "all", map[string]any{"name": "all", "select_all": true, "output_vlan": []int64{12}}).
		Insert("Mirror", "noout", map[string]any{"name": "noout", "select_all": true}).
		Insert("Mirror", "foreign", map[string]any{"name": "foreign", "select_all": true, "output_port": nu("q1")}).
		Insert("Bridge", "b0", map[string]any{"name": "br0", "ports": []any{nu("p1"), nu("p2"), nu("p3")},
			"mirrors": []any{nu("src"), nu("all"), nu("noout"), nu("foreign")}}).
		Insert("Bridge", "b1", map[string]any{"name": "br1", "ports": nu("q1")}).
		Insert("Open_vSwitch", "", map[string]any{"bridges": []any{nu("b0"), nu("b1")}})
	cfg := parseFlowExportAfter(t, c, txn, 2)
	b := cfg.Bridges[0]
	got := map[string]MirrorConfig{}
	for _, m := range b.Mirrors {
		if m.UUID == "" {
			t.Errorf("mirror %s without UUID", m.Name)
		}
		m.UUID = ""
		got[m.Name] = m
	}
	want := map[string]MirrorConfig{
		// A port of another bridge is not selected; output_port wins
		// over output_vlan.
		"src": {Name: "src", SelectSrcPorts: []string{"p1"}, SelectDstPorts: []string{"p2"}, SelectVLANs: []int64{10, 11},
			OutputPort: "p3", OutputVLAN: -1, Snaplen: 100},
		"all": {Name: "all", SelectAll: true, OutputVLAN: 12},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("mirrors:\n got %+v\nwant %+v", got, want)
	}
	wantWarn := map[string]bool{
		"bridge br0: mirror src specifies both output port and output vlan; ignoring output vlan": true,
		"bridge br0: mirror noout does not specify output; ignoring":                              true,
		"bridge br0: mirror foreign outputs to port not on bridge":                                true,
	}
	if len(b.MirrorWarnings) != len(wantWarn) {
		t.Errorf("warnings = %q", b.MirrorWarnings)
	}
	for _, w := range b.MirrorWarnings {
		if !wantWarn[w] {
			t.Errorf("unexpected warning %q", w)
		}
	}
}

// mirFake is a switch that also mirrors.
type mirFake struct {
	*fakeSwitch
	calls [][]MirrorConfig
}

func (f *mirFake) ConfigureMirrors(bridge string, ms []MirrorConfig, warnings []string) {
	f.calls = append(f.calls, ms)
}

func TestApplyPassesMirrorsOnlyWhenTheyChange(t *testing.T) {
	sw := &mirFake{fakeSwitch: newFake()}
	r := NewReconciler(sw)
	b := br("br0")
	r.Apply(&Config{NextCfg: 1, Bridges: []BridgeConfig{b}})
	b.Mirrors = []MirrorConfig{{UUID: "u", Name: "m", SelectAll: true, OutputVLAN: 3}}
	r.Apply(&Config{NextCfg: 2, Bridges: []BridgeConfig{b}})
	b2 := b
	b2.Mirrors = []MirrorConfig{{UUID: "u", Name: "m", SelectAll: true, OutputVLAN: 3}}
	r.Apply(&Config{NextCfg: 3, Bridges: []BridgeConfig{b2}})
	b2.Mirrors = nil
	r.Apply(&Config{NextCfg: 4, Bridges: []BridgeConfig{b2}})
	if len(sw.calls) != 2 || !reflect.DeepEqual(sw.calls[0], b.Mirrors) || sw.calls[1] != nil {
		t.Fatalf("calls = %v", sw.calls)
	}
}
