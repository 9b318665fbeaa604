package ofcmds

import (
	"context"
	"sync/atomic"

	"github.com/gvs-project/gvs/datapath/dpnetdev"
	"github.com/gvs-project/gvs/unixctl"
	"github.com/gvs-project/gvs/vswitchd/backer"
)

// Commands are ofproto-dpif's unixctl commands over a backer's bridges.
type Commands struct {
	sw  *backer.Backer
	ctx context.Context // the daemon's: a time/warp under way ends with it
	// warping is set while a time/warp waits (timecmds.go).
	warping atomic.Bool
}

// New returns the commands over sw's bridges; ctx is the daemon's life.
func New(ctx context.Context, sw *backer.Backer) *Commands {
	return &Commands{sw: sw, ctx: ctx}
}

// List is the command table: ofproto/trace, ofproto/list, dpif/dump-flows,
// revalidator/*, upcall/*-megaflows and set-flow-limit, fdb/*, bfd/*, cfm/*,
// bond/*, lacp/*, time/warp.
func (d *Commands) List() []unixctl.Command {
	var cmds []unixctl.Command
	cmds = append(cmds, d.fdbCommands()...)
	cmds = append(cmds, d.mdbCommands()...)
	cmds = append(cmds, d.ofCommands()...)
	cmds = append(cmds, d.timeCommands()...)
	cmds = append(cmds, d.upcallCommands()...)
	cmds = append(cmds, d.bfdCommands()...)
	cmds = append(cmds, d.cfmCommands()...)
	cmds = append(cmds, d.stpCommands()...)
	cmds = append(cmds, d.tunnelCommands()...)
	cmds = append(cmds, d.bondCommands()...)
	return cmds
}

// datapaths returns the bridges' datapaths sorted by name.
func (d *Commands) datapaths() []*dpnetdev.Datapath { return d.sw.Datapaths() }
