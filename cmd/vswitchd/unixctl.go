package vswitchd

import (
	"sort"

	"context"
	"fmt"
	"github.com/gvs-project/gvs/unixctl"
	"github.com/gvs-project/gvs/vswitchd/ctcmds"
	"github.com/gvs-project/gvs/vswitchd/ctstate"
	"github.com/gvs-project/gvs/vswitchd/ofcmds"
	"runtime"
	"time"
)

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// registerCommands adds the daemon's unixctl commands. Each layer's
// commands are registered here, from the top, so that the datapath and
// ofproto never import appctl.
func (d *Daemon) registerCommands() error {
	if err := d.logs.RegisterCommands(d.reg); err != nil {
		return err
	}
	if err := d.cov.RegisterCommands(d.reg); err != nil {
		return err
	}
	cmds := []unixctl.Command{
		{Name: "exit", Usage: "[--cleanup]", MaxArgs: 1, Run: d.cmdExit},
		{Name: "memory/show", Run: d.cmdMemoryShow},
	}
	cmds = append(cmds, d.dpctl.List()...)
	cmds = append(cmds, ctcmds.New(d.cfg.Program, d.dpctl.Find).List()...)
	cmds = append(cmds, ctstate.Commands(d.dpctl.Find)...)
	cmds = append(cmds, ofcmds.New(d.ctx, d.sw).List()...)
	for _, c := range cmds {
		if err := d.reg.RegisterCommand(c); err != nil {
			return err
		}
	}
	return nil
}

func (d *Daemon) cmdExit(_ context.Context, args []string) (string, error) {
	go func() {
		time.Sleep(10 * time.Millisecond) // let the reply go out first
		d.Exit()
	}()
	return "", nil
}

func (d *Daemon) cmdMemoryShow(context.Context, []string) (string, error) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	ports, flows := 0, uint64(0)
	for _, dp := range d.datapaths() {
		ports += len(dp.Ports())
		flows += dp.Stats().Flows
	}
	out := fmt.Sprintf("goroutines:%d heap-bytes:%d megaflows:%d ports:%d", runtime.NumGoroutine(), ms.HeapAlloc, flows, ports)
	if d.db != nil {
		// The embedded database's clients: bytes queued for them
		// (ovsdb-server's "backlog") and those dropped for falling
		// behind on their monitors.
		out += fmt.Sprintf(" ovsdb-backlog:%d ovsdb-slow-clients-dropped:%d", d.db.Backlog(), d.db.SlowClientsDropped())
	}
	return out + "\n", nil
}
