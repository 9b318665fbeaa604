package backer

import (
	"log/slog"
	"testing"

	"github.com/gvs-project/gvs/ovsdb/bridge"
)

// The device an interface gets under Open vSwitch's test modes:
// --disable-system disables the kernel datapath type only (netdev
// bridges keep real devices), --enable-dummy=system overrides the system
// netdev and dpif types, --enable-dummy=override every system and
// internal type.
func TestDeviceTypesFollowOpenVSwitchsTestModes(t *testing.T) {
	type mode struct{ disableSystem, dummySystem, override bool }
	bridges := map[string]*dpBridge{
		"system": {cfgType: "system", dpTyp: "netdev"},
		"netdev": {cfgType: "netdev", dpTyp: "netdev"},
		"dummy":  {cfgType: "dummy", dpTyp: "dummy"},
	}
	for _, tc := range []struct {
		mode          mode
		bridge, iface string
		want          string
	}{
		{mode{}, "system", "system", "system"},
		{mode{}, "system", "internal", "internal"},
		{mode{}, "netdev", "", "system"},
		{mode{}, "dummy", "internal", "dummy"},
		{mode{}, "dummy", "system", "system"},
		{mode{}, "netdev", "patch", "patch"},
		{mode{disableSystem: true}, "system", "system", "refused"},
		{mode{disableSystem: true}, "system", "internal", "dummy"},
		{mode{disableSystem: true}, "netdev", "system", "system"},
		{mode{disableSystem: true}, "netdev", "internal", "internal"},
		{mode{disableSystem: true}, "dummy", "internal", "dummy"},
		{mode{dummySystem: true}, "system", "system", "dummy"},
		{mode{dummySystem: true}, "system", "internal", "dummy"},
		{mode{dummySystem: true}, "netdev", "system", "dummy"},
		{mode{dummySystem: true}, "netdev", "internal", "internal"},
		{mode{dummySystem: true, disableSystem: true}, "netdev", "internal", "internal"},
		{mode{override: true}, "netdev", "internal", "dummy"},
		{mode{override: true}, "netdev", "system", "dummy"},
		{mode{override: true}, "netdev", "geneve", "geneve"},
		{mode{}, "netdev", "afxdp", "afxdp"},
		{mode{dummySystem: true}, "netdev", "afxdp", "afxdp"},
		{mode{override: true}, "netdev", "afxdp", "dummy"},
	} {
		d := &devices{disableSystem: tc.mode.disableSystem, dummySystem: tc.mode.dummySystem, dummyOverride: tc.mode.override}
		got := d.devType(bridges[tc.bridge], &bridge.IfaceConfig{Name: "p", Type: tc.iface})
		if got != tc.want {
			t.Errorf("%+v, %s bridge, type %q: %s, want %s", tc.mode, tc.bridge, tc.iface, got, tc.want)
		}
	}
}

// The bridge's own internal port takes the dummy MAC reserved for it when
// the bridge was created; other dummies count up; a system interface of
// a disabled kernel datapath is refused with Open vSwitch's message.
func TestDevicesOpenDummiesWithTheirMACsAndRefuseDisabledOnes(t *testing.T) {
	dps := &datapathSet{}
	d := &devices{disableSystem: true, dps: dps, logger: func(string) *slog.Logger { return slog.New(slog.DiscardHandler) }}
	b := &dpBridge{name: "br0", cfgType: "system", dpTyp: "netdev", localDummyMAC: dps.nextDummyMAC()}
	local, err := d.open(b, &bridge.IfaceConfig{Name: "br0", Type: "internal"})
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	other, err := d.open(b, &bridge.IfaceConfig{Name: "p1", Type: "internal"})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if got, want := macString(local.MAC()), "aa:55:aa:55:00:00"; got != want {
		t.Errorf("br0: MAC %s, want %s", got, want)
	}
	if got, want := macString(other.MAC()), "aa:55:aa:55:00:01"; got != want {
		t.Errorf("p1: MAC %s, want %s", got, want)
	}
	if d.kernel(b, &bridge.IfaceConfig{Name: "p1", Type: "internal"}) {
		t.Error("a dummy internal port counted as a kernel device")
	}
	_, err = d.open(b, &bridge.IfaceConfig{Name: "eth9", Type: "system"})
	if want := "could not open network device eth9 (Address family not supported by protocol)"; err == nil || err.Error() != want {
		t.Errorf("system interface on a disabled kernel datapath: %v, want %q", err, want)
	}
}
