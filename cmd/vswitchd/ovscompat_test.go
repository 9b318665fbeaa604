package vswitchd

import (
	"testing"
)

// parseConfig runs the command line through NewCommand as Main does.
func parseOVSConfig(t *testing.T, program string, env map[string]string, args ...string) (*Config, error) {
	t.Helper()
	for k, v := range env {
		t.Setenv(k, v)
	}
	var got *Config
	cmd := NewCommand(program, func(c *Config) error { got = c; return nil })
	cmd.SetArgs(normalizeArgs(args))
	err := cmd.Execute()
	return got, err
}

// Open vSwitch's test suite starts the daemon with no DATABASE argument
// next to its own ovsdb-server on $OVS_RUNDIR/db.sock: under the name
// ovs-vswitchd, gvs must be that server's client, not replace its socket
// with an embedded server.
func TestDatabaseDefaultsToRundirDBSockUnderOpenVSwitchsName(t *testing.T) {
	env := map[string]string{"OVS_RUNDIR": "/run/x", "OVS_DBDIR": "/db/x", "OVS_LOGDIR": "/log/x"}
	for _, tc := range []struct {
		program string
		args    []string
		want    string
	}{
		{"ovs-vswitchd", nil, "unix:/run/x/db.sock"},
		{"ovs-vswitchd", []string{"tcp:127.0.0.1:6640"}, "tcp:127.0.0.1:6640"},
		{"ovs-vswitchd", []string{"--rundir=/other"}, "unix:/other/db.sock"},
		{"gvs-vswitchd", nil, ""}, // gvs's own name: the embedded server
	} {
		cfg, err := parseOVSConfig(t, tc.program, env, tc.args...)
		if err != nil {
			t.Fatalf("%s %v: %v", tc.program, tc.args, err)
		}
		if cfg.Database != tc.want {
			t.Errorf("%s %v: Database = %q, want %q", tc.program, tc.args, cfg.Database, tc.want)
		}
	}
}

// --enable-dummy takes Open vSwitch's optional argument: bare enables
// dummy devices, =system also turns system interfaces (and the internal
// ports of system-type bridges) into dummies (OVN's sandboxes), and
// =override every system and internal interface (dpctl.at's
// OVS_VSWITCHD_START).
func TestEnableDummyAcceptsOpenVSwitchsModes(t *testing.T) {
	for _, tc := range []struct {
		arg             string
		dummy, override bool
		system          bool
		wantErr         bool
	}{
		{"--enable-dummy", true, false, false, false},
		{"--enable-dummy=system", true, false, true, false},
		{"--enable-dummy=override", true, true, false, false},
		{"--enable-dummy=bogus", false, false, false, true},
	} {
		// --dummy-numa is dpif-netdev.at's; accepted and ignored.
		cfg, err := parseOVSConfig(t, "ovs-vswitchd", nil, tc.arg, "--disable-system", `--dummy-numa=0,0,0,0,8,8,8,8`)
		if tc.wantErr {
			if err == nil {
				t.Errorf("%s: accepted", tc.arg)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.arg, err)
		}
		if cfg.EnableDummy != tc.dummy || cfg.DummyOverride != tc.override || cfg.DummySystem != tc.system {
			t.Errorf("%s: EnableDummy=%v DummyOverride=%v DummySystem=%v, want %v %v %v", tc.arg,
				cfg.EnableDummy, cfg.DummyOverride, cfg.DummySystem, tc.dummy, tc.override, tc.system)
		}
	}
}
