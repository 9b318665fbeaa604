package bridge

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// fakeSwitch records calls and allocates ofports like Open vSwitch.
type fakeSwitch struct {
	calls   []string
	bridges map[string]map[string]int64
	refuse  map[string]bool // interface names whose AddPort fails
}

func newFake() *fakeSwitch {
	return &fakeSwitch{bridges: map[string]map[string]int64{}, refuse: map[string]bool{}}
}

func (f *fakeSwitch) AddBridge(c *BridgeConfig) error {
	f.calls = append(f.calls, "add-br "+c.Name)
	f.bridges[c.Name] = map[string]int64{}
	return nil
}
func (f *fakeSwitch) UpdateBridge(c *BridgeConfig) error {
	f.calls = append(f.calls, "update-br "+c.Name)
	return nil
}
func (f *fakeSwitch) DelBridge(n string) error {
	f.calls = append(f.calls, "del-br "+n)
	delete(f.bridges, n)
	return nil
}
func (f *fakeSwitch) AddPort(b string, ic *IfaceConfig) (int64, error) {
	f.calls = append(f.calls, "add-port "+b+" "+ic.Name)
	if f.refuse[ic.Name] {
		return -1, errors.New("could not open network device " + ic.Name + " (No such device)")
	}
	n := ic.OfportRequest
	if n == 0 {
		n = int64(len(f.bridges[b]) + 1)
	}
	f.bridges[b][ic.Name] = n
	return n, nil
}
func (f *fakeSwitch) DelPort(b, i string) error {
	f.calls = append(f.calls, "del-port "+b+" "+i)
	delete(f.bridges[b], i)
	return nil
}
func (f *fakeSwitch) IfaceStatus(b, i string) IfaceStatus {
	return IfaceStatus{Ofport: f.bridges[b][i], LinkState: "up"}
}
func (f *fakeSwitch) BridgeStatus(b string) BridgeStatus {
	return BridgeStatus{DatapathID: "0000000000000001"}
}

func br(name string, ifaces ...IfaceConfig) BridgeConfig {
	b := BridgeConfig{UUID: "B-" + name, Name: name}
	for _, ic := range ifaces {
		b.Ports = append(b.Ports, PortConfig{UUID: "P-" + ic.Name, Name: ic.Name, Tag: -1, Interfaces: []IfaceConfig{ic}})
	}
	return b
}

func ifc(name, typ string) IfaceConfig {
	return IfaceConfig{UUID: "I-" + name, Name: name, Type: typ}
}

func TestApplyAddsOnlyWhatChanged(t *testing.T) {
	sw := newFake()
	r := NewReconciler(sw)
	st := r.Apply(&Config{NextCfg: 1, Bridges: []BridgeConfig{br("br0", ifc("p1", "dummy"), ifc("p2", "dummy"))}})
	if st.CurCfg != 1 || st.Interfaces["I-p1"].Ofport != 1 || st.Interfaces["I-p2"].Ofport != 2 {
		t.Fatalf("status = %+v", st)
	}
	sw.calls = nil
	st = r.Apply(&Config{NextCfg: 2, Bridges: []BridgeConfig{br("br0", ifc("p1", "dummy"), ifc("p2", "dummy"), ifc("p3", "dummy"))}})
	if want := []string{"add-port br0 p3"}; !slices.Equal(sw.calls, want) {
		t.Fatalf("calls = %v, want %v (existing ports untouched)", sw.calls, want)
	}
	if st.CurCfg != 2 || st.Interfaces["I-p3"].Ofport != 3 {
		t.Fatalf("status = %+v", st)
	}
}

func TestApplyReaddsChangedInterfaceAndRemovesDeletedOnes(t *testing.T) {
	sw := newFake()
	r := NewReconciler(sw)
	r.Apply(&Config{Bridges: []BridgeConfig{br("br0", ifc("p1", "dummy"), ifc("p2", "dummy"))}})
	sw.calls = nil
	p1 := ifc("p1", "dummy")
	p1.OfportRequest = 10
	st := r.Apply(&Config{Bridges: []BridgeConfig{br("br0", p1)}})
	want := []string{"del-port br0 p1", "del-port br0 p2", "add-port br0 p1"}
	got := slices.Clone(sw.calls)
	slices.Sort(got[:2])
	if !slices.Equal(got, want) {
		t.Fatalf("calls = %v, want %v", sw.calls, want)
	}
	if st.Interfaces["I-p1"].Ofport != 10 {
		t.Fatalf("p1 ofport %d, want the requested 10", st.Interfaces["I-p1"].Ofport)
	}
}

func TestBadInterfaceGetsErrorAndOthersStillWork(t *testing.T) {
	sw := newFake()
	sw.refuse["nodev"] = true
	r := NewReconciler(sw)
	st := r.Apply(&Config{Bridges: []BridgeConfig{br("br0", ifc("nodev", ""), ifc("p1", "dummy"))}})
	bad, good := st.Interfaces["I-nodev"], st.Interfaces["I-p1"]
	if bad.Ofport != -1 || bad.Error != "could not open network device nodev (No such device)" {
		t.Fatalf("bad interface status = %+v", bad)
	}
	if good.Ofport != 1 || good.Error != "" {
		t.Fatalf("good interface status = %+v", good)
	}
	// The device appears: the next reconciliation retries and succeeds.
	sw.refuse["nodev"] = false
	st = r.Apply(&Config{Bridges: []BridgeConfig{br("br0", ifc("nodev", ""), ifc("p1", "dummy"))}})
	if st.Interfaces["I-nodev"].Error != "" || st.Interfaces["I-nodev"].Ofport <= 0 {
		t.Fatalf("retried interface status = %+v", st.Interfaces["I-nodev"])
	}
}

func TestInterfaceNameBelongsToOneBridge(t *testing.T) {
	sw := newFake()
	r := NewReconciler(sw)
	dup := ifc("p1", "dummy")
	dup.UUID = "I-p1-on-br1"
	st := r.Apply(&Config{Bridges: []BridgeConfig{br("br1", dup), br("br0", ifc("p1", "dummy"))}})
	if got := fmt.Sprint(sw.calls); got != "[add-br br0 add-port br0 p1 add-br br1]" {
		t.Fatalf("calls = %s", got)
	}
	if e := st.Interfaces["I-p1-on-br1"]; e.Ofport != -1 || e.Error != "could not add network device p1 to ofproto (File exists)" {
		t.Fatalf("duplicate interface status = %+v", e)
	}
	if st.Interfaces["I-p1"].Ofport != 1 {
		t.Fatalf("first p1 status = %+v", st.Interfaces["I-p1"])
	}
}

func TestDeletingBridgeRemovesItsPortsThenTheBridge(t *testing.T) {
	sw := newFake()
	r := NewReconciler(sw)
	r.Apply(&Config{Bridges: []BridgeConfig{br("br0", ifc("p1", "dummy"))}})
	sw.calls = nil
	r.Apply(&Config{})
	if want := []string{"del-port br0 p1", "del-br br0"}; !reflect.DeepEqual(sw.calls, want) {
		t.Fatalf("calls = %v, want %v", sw.calls, want)
	}
}

func TestBridgeLevelChangeUpdatesWithoutTouchingPorts(t *testing.T) {
	sw := newFake()
	r := NewReconciler(sw)
	b := br("br0", ifc("p1", "dummy"))
	r.Apply(&Config{Bridges: []BridgeConfig{b}})
	sw.calls = nil
	b.FailMode = "secure"
	r.Apply(&Config{Bridges: []BridgeConfig{b}})
	if want := []string{"update-br br0"}; !reflect.DeepEqual(sw.calls, want) {
		t.Fatalf("calls = %v, want %v", sw.calls, want)
	}
}

// mtuFake is a fakeSwitch that can change MTUs in place.
type mtuFake struct {
	*fakeSwitch
	failMTU bool
}

func (f *mtuFake) SetMTU(b, i string, mtu int64) error {
	f.calls = append(f.calls, fmt.Sprintf("set-mtu %s %s %d", b, i, mtu))
	if f.failMTU {
		return errors.New("refused")
	}
	return nil
}

func TestMTURequestChangeKeepsThePortWhenTheSwitchCanSetIt(t *testing.T) {
	for _, tc := range []struct {
		name string
		sw   Switch
		want []string
	}{
		{"in place", &mtuFake{fakeSwitch: newFake()}, []string{"set-mtu br0 p1 9000"}},
		{"refused", &mtuFake{fakeSwitch: newFake(), failMTU: true}, []string{"set-mtu br0 p1 9000", "del-port br0 p1", "add-port br0 p1"}},
		{"no MTUSetter", newFake(), []string{"del-port br0 p1", "add-port br0 p1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReconciler(tc.sw)
			r.Apply(&Config{Bridges: []BridgeConfig{br("br0", ifc("p1", "dummy"))}})
			var calls *[]string
			switch f := tc.sw.(type) {
			case *mtuFake:
				calls = &f.calls
			case *fakeSwitch:
				calls = &f.calls
			}
			*calls = nil
			p1 := ifc("p1", "dummy")
			p1.MTURequest = 9000
			st := r.Apply(&Config{Bridges: []BridgeConfig{br("br0", p1)}})
			if !slices.Equal(*calls, tc.want) {
				t.Fatalf("calls = %v, want %v", *calls, tc.want)
			}
			if st.Interfaces["I-p1"].Ofport != 1 {
				t.Fatalf("p1 ofport %d, want 1", st.Interfaces["I-p1"].Ofport)
			}
			*calls = nil
			r.Apply(&Config{Bridges: []BridgeConfig{br("br0", p1)}})
			if len(*calls) != 0 {
				t.Fatalf("unchanged MTU request caused calls %v", *calls)
			}
		})
	}
}

// A bridge named with a "/" or "\" is ignored, as Open vSwitch ignores it
// (its socket would land in another directory): no switch call, no status.
func TestApplyIgnoresBridgesWithUnsafeNames(t *testing.T) {
	sw := newFake()
	r := NewReconciler(sw)
	st := r.Apply(&Config{NextCfg: 1, Bridges: []BridgeConfig{br("a", ifc("a", "internal")), br("b/c", ifc("b/c", "internal")), br(`d\e`, ifc(`d\e`, "internal"))}})
	if want := []string{"b/c", `d\e`}; !slices.Equal(st.Ignored, want) {
		t.Errorf("ignored %q, want %q", st.Ignored, want)
	}
	for _, c := range sw.calls {
		if strings.Contains(c, "b/c") || strings.Contains(c, `d\e`) {
			t.Errorf("switch call %q for an ignored bridge", c)
		}
	}
	if _, ok := st.Interfaces["I-b/c"]; ok || st.CurCfg != 1 {
		t.Errorf("status %+v: want cur_cfg 1 and no status for b/c's interface", st)
	}
}
