package ctcmds

import (
	"context"
	"errors"
	"testing"

	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/datapath/dpnetdev"
	"github.com/gvs-project/gvs/unixctl"
)

// run calls the named command of cmds with args.
func run(t *testing.T, cmds []unixctl.Command, name string, args ...string) (string, error) {
	t.Helper()
	for _, c := range cmds {
		if c.Name == name {
			return c.Run(context.Background(), args)
		}
	}
	t.Fatalf("no command %s", name)
	return "", nil
}

// The commands find their datapath through the resolver: with a name
// ("netdev@ovs-netdev") or without one (the only datapath); maxconns
// and TCP sequence checking answer in Open vSwitch's words.
func TestConntrackCommandsResolveTheDatapathAndAnswerAsOpenVSwitch(t *testing.T) {
	dp := dpnetdev.New("ovs-netdev", dpif.DefaultConfig())
	defer dp.Close()
	var asked []string
	cmds := New("ovs-vswitchd", func(name string) (*dpnetdev.Datapath, error) {
		asked = append(asked, name)
		if name != "" && name != "netdev@ovs-netdev" {
			return nil, errors.New("datapath \"" + name + "\" does not exist")
		}
		return dp, nil
	}).List()
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"dpctl/ct-set-maxconns", []string{"netdev@ovs-netdev", "10"}, "setting maxconns successful\n"},
		{"dpctl/ct-get-maxconns", nil, "10\n"},
		{"dpctl/ct-disable-tcp-seq-chk", nil, "disabling TCP sequence checking successful\n"},
		{"dpctl/ct-get-tcp-seq-chk", []string{"netdev@ovs-netdev"}, "TCP sequence checking: disabled\n"},
		{"dpctl/ct-get-nconns", nil, "0\n"},
	} {
		if got, err := run(t, cmds, c.name, c.args...); err != nil || got != c.want {
			t.Errorf("%s %q = %q, %v; want %q", c.name, c.args, got, err, c.want)
		}
	}
	if _, err := run(t, cmds, "dpctl/ct-set-maxconns", "-5"); err == nil || err.Error() != "maxconns missing or malformed" {
		t.Errorf("ct-set-maxconns -5: %v", err)
	}
	if _, err := run(t, cmds, "dpctl/ct-get-nconns", "nosuch@dp"); err == nil {
		t.Error("ct-get-nconns on an unknown datapath succeeded")
	}
	if len(asked) == 0 || asked[0] != "netdev@ovs-netdev" || asked[1] != "" {
		t.Errorf("resolver asked for %q", asked)
	}
}
