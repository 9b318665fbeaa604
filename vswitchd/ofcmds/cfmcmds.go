package ofcmds

import (
	"context"

	"github.com/gvs-project/gvs/unixctl"
)

// cfmCommands are Open vSwitch's cfm/show and cfm/set-fault.
func (d *Commands) cfmCommands() []unixctl.Command {
	return []unixctl.Command{
		{Name: "cfm/show", Usage: "[interface]", MaxArgs: 1, Run: func(_ context.Context, args []string) (string, error) {
			return d.sw.CFM().ShowCommand(args)
		}},
		{Name: "cfm/set-fault", Usage: "[interface] normal|false|true", MinArgs: 1, MaxArgs: 2,
			Run: func(_ context.Context, args []string) (string, error) {
				return d.sw.CFM().SetFaultCommand(args)
			}},
	}
}

// tunnelCommands is Open vSwitch's ofproto/list-tunnels.
func (d *Commands) tunnelCommands() []unixctl.Command {
	return []unixctl.Command{
		{Name: "ofproto/list-tunnels", Run: func(context.Context, []string) (string, error) {
			return d.sw.ListTunnels(), nil
		}},
	}
}
