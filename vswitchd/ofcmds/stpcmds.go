package ofcmds

import (
	"context"

	"github.com/gvs-project/gvs/unixctl"
)

// stpCommands are Open vSwitch's stp/show and stp/tcn.
func (d *Commands) stpCommands() []unixctl.Command {
	name := func(args []string) string {
		if len(args) > 0 {
			return args[0]
		}
		return ""
	}
	return []unixctl.Command{
		{Name: "stp/show", Usage: "[bridge]", MaxArgs: 1, Run: func(_ context.Context, args []string) (string, error) {
			return d.sw.STPShow(name(args))
		}},
		{Name: "rstp/show", Usage: "[bridge]", MaxArgs: 1, Run: func(_ context.Context, args []string) (string, error) {
			return d.sw.RSTPShow(name(args))
		}},
		{Name: "stp/tcn", Usage: "[bridge]", MaxArgs: 1, Run: func(_ context.Context, args []string) (string, error) {
			if err := d.sw.STPTCN(name(args)); err != nil {
				return "", err
			}
			return "OK", nil
		}},
	}
}
