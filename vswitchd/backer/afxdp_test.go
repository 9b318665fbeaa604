package backer

import (
	"errors"
	"testing"

	"github.com/gvs-project/gvs/datapath/netdev/afxdp"
)

// TestAFXDPOptionsReadAsOpenVSwitchReadsThem: n_rxq, xdp-mode and
// use-need-wakeup defaults, lenient values and the two refusals, with
// Open vSwitch's log line and Interface.error text.
func TestAFXDPOptionsReadAsOpenVSwitchReadsThem(t *testing.T) {
	for _, tc := range []struct {
		opts     map[string]string
		rxq      int
		mode     afxdp.Mode
		wakeup   bool
		err, log string
	}{
		{opts: nil, rxq: 1, mode: afxdp.ModeBestEffort, wakeup: true},
		{opts: map[string]string{"n_rxq": "4", "xdp-mode": "Generic", "use-need-wakeup": "FALSE"}, rxq: 4, mode: afxdp.ModeGeneric},
		{opts: map[string]string{"n_rxq": "0", "use-need-wakeup": "maybe"}, rxq: 1, wakeup: true},
		{opts: map[string]string{"n_rxq": "two", "xdp-mode": "native-with-zerocopy"}, rxq: 1, mode: afxdp.ModeNativeZC, wakeup: true},
		{opts: map[string]string{"n_rxq": "20"}, err: "p1: could not set configuration (Invalid argument)", log: "p1: Too big 'n_rxq' (20 > 16)."},
		{opts: map[string]string{"xdp-mode": "bogus"}, err: "p1: could not set configuration (Invalid argument)", log: "p1: Incorrect xdp-mode (bogus)."},
	} {
		cfg, err := afxdpOptions("p1", tc.opts)
		if tc.err != "" {
			var le *loggedError
			if !errors.As(err, &le) || le.msg != tc.err || len(le.lines) != 1 || le.lines[0].msg != tc.log || le.lines[0].module != "netdev_afxdp" {
				t.Errorf("%v: err %#v, want %q after %q", tc.opts, err, tc.err, tc.log)
			}
			continue
		}
		if err != nil || cfg.RxQueues != tc.rxq || cfg.Mode != tc.mode || cfg.NeedWakeup != tc.wakeup {
			t.Errorf("%v: %+v, %v", tc.opts, cfg, err)
		}
	}
}
