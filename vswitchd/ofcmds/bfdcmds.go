package ofcmds

import (
	"context"

	"github.com/gvs-project/gvs/unixctl"
)

// bfdCommands are Open vSwitch's bfd/show and bfd/set-forwarding.
func (d *Commands) bfdCommands() []unixctl.Command {
	return []unixctl.Command{
		{Name: "bfd/show", Usage: "[interface]", MaxArgs: 1, Run: func(_ context.Context, args []string) (string, error) {
			return d.sw.BFD().ShowCommand(args)
		}},
		{Name: "bfd/set-forwarding", Usage: "[interface] normal|false|true", MinArgs: 1, MaxArgs: 2,
			Run: func(_ context.Context, args []string) (string, error) {
				return d.sw.BFD().SetForwardingCommand(args)
			}},
	}
}
