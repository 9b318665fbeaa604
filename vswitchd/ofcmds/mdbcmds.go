package ofcmds

import (
	"context"
	"errors"
	"strings"

	"github.com/gvs-project/gvs/unixctl"
)

// mdbCommands are Open vSwitch's mdb/* commands over each bridge's
// multicast snooping database (Bridge.mcast_snooping_enable).
func (d *Commands) mdbCommands() []unixctl.Command {
	return []unixctl.Command{
		{Name: "mdb/show", Usage: "bridge", MinArgs: 1, MaxArgs: 1, Run: d.cmdMdbShow},
		{Name: "mdb/flush", Usage: "[bridge]", MaxArgs: 1, Run: d.cmdMdbFlush},
	}
}

var (
	errMcastDisabled = errors.New("multicast snooping is disabled")
	errNoSuchBridge  = errors.New("no such bridge")
)

func (d *Commands) cmdMdbShow(_ context.Context, args []string) (string, error) {
	text, ok, enabled := d.sw.View().McastShow(args[0])
	switch {
	case !ok:
		return "", errNoSuchBridge
	case !enabled:
		return "", errMcastDisabled
	}
	return text, nil
}

func (d *Commands) cmdMdbFlush(_ context.Context, args []string) (string, error) {
	ok, enabled := d.sw.View().McastFlush(strings.Join(args, ""))
	switch {
	case !ok:
		return "", errNoSuchBridge
	case !enabled:
		return "", errMcastDisabled
	}
	return "table successfully flushed\n", nil
}
