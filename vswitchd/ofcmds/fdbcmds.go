package ofcmds

import (
	"context"
	"fmt"
	"strconv"

	"github.com/gvs-project/gvs/datapath/l2fib"
	"github.com/gvs-project/gvs/unixctl"
)

// fdbCommands are Open vSwitch's fdb/* commands over each bridge's MAC
// learning table (the table mac_learn(table=N) datapath actions use).
func (d *Commands) fdbCommands() []unixctl.Command {
	return []unixctl.Command{
		{Name: "fdb/show", Usage: "bridge", MinArgs: 1, MaxArgs: 1, Run: d.cmdFDBShow},
		{Name: "fdb/flush", Usage: "[bridge]", MaxArgs: 1, Run: d.cmdFDBFlush},
		{Name: "fdb/stats-show", Usage: "bridge", MinArgs: 1, MaxArgs: 1, Run: d.cmdFDBStatsShow},
		{Name: "fdb/stats-clear", Usage: "[bridge]", MaxArgs: 1, Run: d.cmdFDBStatsClear},
		{Name: "fdb/add", Usage: "bridge port vlan mac", MinArgs: 4, MaxArgs: 4, Run: d.cmdFDBAdd},
		{Name: "fdb/del", Usage: "bridge vlan mac", MinArgs: 3, MaxArgs: 3, Run: d.cmdFDBDel},
	}
}

func (d *Commands) fdb(name string) (*l2fib.Table, func(uint32) string, error) {
	t, names, ok := d.sw.View().BridgeFDB(name)
	if !ok {
		return nil, nil, fmt.Errorf("no such bridge")
	}
	return t, names, nil
}

// forBridges runs fn on the named bridge's table, or on every bridge's.
func (d *Commands) forBridges(args []string, fn func(name string, t *l2fib.Table)) error {
	names := d.sw.View().BridgeNames()
	if len(args) == 1 {
		names = args
	}
	for _, n := range names {
		t, _, err := d.fdb(n)
		if err != nil {
			return err
		}
		fn(n, t)
	}
	return nil
}

func (d *Commands) cmdFDBShow(_ context.Context, args []string) (string, error) {
	t, names, err := d.fdb(args[0])
	if err != nil {
		return "", err
	}
	return string(l2fib.AppendShow(nil, t.Dump(), names)), nil
}

func (d *Commands) cmdFDBFlush(_ context.Context, args []string) (string, error) {
	if err := d.forBridges(args, func(_ string, t *l2fib.Table) { t.Flush(false) }); err != nil {
		return "", err
	}
	return "table successfully flushed\n", nil
}

func (d *Commands) cmdFDBStatsShow(_ context.Context, args []string) (string, error) {
	t, _, err := d.fdb(args[0])
	if err != nil {
		return "", err
	}
	return string(l2fib.AppendStats(nil, args[0], t.Stats())), nil
}

func (d *Commands) cmdFDBStatsClear(_ context.Context, args []string) (string, error) {
	if err := d.forBridges(args, func(_ string, t *l2fib.Table) { t.ClearStats() }); err != nil {
		return "", err
	}
	return "statistics successfully cleared\n", nil
}

func parseVLANMAC(vlan, mac string) (uint16, l2fib.MAC, error) {
	v, err := strconv.ParseUint(vlan, 10, 12)
	if err != nil {
		return 0, l2fib.MAC{}, fmt.Errorf("invalid vlan %s", vlan)
	}
	m, err := l2fib.ParseMAC(mac)
	if err != nil {
		return 0, l2fib.MAC{}, fmt.Errorf("invalid mac address %s", mac)
	}
	return uint16(v), m, nil
}

func (d *Commands) cmdFDBAdd(_ context.Context, args []string) (string, error) {
	t, names, err := d.fdb(args[0])
	if err != nil {
		return "", err
	}
	odp, ok := d.sw.View().FDBPort(args[0], args[1])
	if !ok {
		return "", fmt.Errorf("no such port %s", args[1])
	}
	vlan, mac, err := parseVLANMAC(args[2], args[3])
	if err != nil {
		return "", err
	}
	// An entry being replaced is named, as Open vSwitch does: a dynamic
	// one on any port, a static one on another port.
	var reply string
	if at, static, ok := t.Get(vlan, mac); ok && (at != odp || !static) {
		kind := "dynamic"
		if static {
			kind = "static"
		}
		reply = fmt.Sprintf("Overriding already existing %s entry on %s\n", kind, names(at))
	}
	if err := t.AddStatic(vlan, mac, odp); err != nil {
		return "", err
	}
	return reply, nil
}

func (d *Commands) cmdFDBDel(_ context.Context, args []string) (string, error) {
	t, _, err := d.fdb(args[0])
	if err != nil {
		return "", err
	}
	vlan, mac, err := parseVLANMAC(args[1], args[2])
	if err != nil {
		return "", err
	}
	if !t.DelStatic(vlan, mac) {
		return "", fmt.Errorf("delete entry error")
	}
	return "", nil
}
