package vswitchd

import (
	"os"
	"path/filepath"
	"testing"
)

func TestConntrackStateFromFlagEnvironmentAndConfigFile(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "gvs.yaml")
	if err := os.WriteFile(cfgFile, []byte("conntrack-state: /var/lib/gvs/from-file.state\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	for _, tc := range []struct {
		args []string
		env  string
		want string
	}{
		{nil, "", ""},
		{[]string{"--conntrack-state=/run/ct.state"}, "", "/run/ct.state"},
		{[]string{"--conntrack-state", "rel/ct.state"}, "", filepath.Join(wd, "rel/ct.state")},
		{nil, "/env/ct.state", "/env/ct.state"},
		{[]string{"--conntrack-state=/flag.state"}, "/env/ct.state", "/flag.state"},
		{[]string{"--config=" + cfgFile}, "", "/var/lib/gvs/from-file.state"},
	} {
		t.Setenv("GVS_CONNTRACK_STATE", tc.env)
		var got *Config
		cmd := NewCommand("gvs-vswitchd", func(c *Config) error { got = c; return nil })
		cmd.SetArgs(tc.args)
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		if got.ConntrackState != tc.want {
			t.Errorf("args %q GVS_CONNTRACK_STATE=%q: ConntrackState = %q, want %q", tc.args, tc.env, got.ConntrackState, tc.want)
		}
	}
}
