package dpctl

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/gvs-project/gvs/unixctl"
)

// Open vSwitch's dpif-netdev chooses among SIMD variants of its packet
// input (dpif-impl-*) and of its subtable lookup (subtable-lookup-*).
// gvs has one of each, written in Go: the input is listed as
// dpif_scalar, the lookup as generic, beside autovalidator (which Open
// vSwitch always offers). The commands keep and report the choice and
// the priorities as Open vSwitch does, but nothing in gvs's packet path
// depends on them.

// implChoice is the commands' state.
type implChoice struct {
	mu sync.Mutex
	// prio is each lookup implementation's priority, in listing order.
	prio []lookupImpl
}

type lookupImpl struct {
	name string
	prio int
}

func (c *implChoice) init() {
	if c.prio == nil {
		c.prio = []lookupImpl{{"autovalidator", 0}, {"generic", 1}}
	}
}

func (d *Commands) implCommands() []unixctl.Command {
	return []unixctl.Command{
		{Name: "dpif-netdev/dpif-impl-set", Usage: "dpif_implementation_name", MinArgs: 1, MaxArgs: 1, Run: d.cmdDpifImplSet},
		{Name: "dpif-netdev/dpif-impl-get", Run: d.cmdDpifImplGet},
		{Name: "dpif-netdev/subtable-lookup-prio-set", Usage: "[lookup_func] [prio]", MinArgs: 2, MaxArgs: 2, Run: d.cmdLookupPrioSet},
		{Name: "dpif-netdev/subtable-lookup-info-get", Run: d.cmdLookupInfoGet},
		{Name: "dpif-netdev/subtable-lookup-prio-get", Run: d.cmdLookupInfoGet},
	}
}

// pmdCoreList is "c1,c2,..." of the PMD threads of every datapath, or
// "none".
func (d *Commands) pmdCoreList() string {
	var cores []string
	for _, dp := range d.datapaths() {
		for _, t := range dp.Threads() {
			if !t.Main {
				cores = append(cores, strconv.Itoa(t.Core))
			}
		}
	}
	if len(cores) == 0 {
		return "none"
	}
	return strings.Join(cores, ",")
}

func (d *Commands) cmdDpifImplSet(_ context.Context, args []string) (string, error) {
	if args[0] != "dpif_scalar" {
		msg := fmt.Sprintf("DPIF implementation not available: Unknown DPIF implementation %s.\n", args[0])
		d.logf("dpif_netdev", "ERR", msg)
		return "", errors.New(msg)
	}
	msg := fmt.Sprintf("DPIF implementation set to %s.\n", args[0])
	d.logf("dpif_netdev", "INFO", msg)
	return msg, nil
}

func (d *Commands) cmdDpifImplGet(context.Context, []string) (string, error) {
	return "Available DPIF implementations:\n  dpif_scalar (pmds: " + d.pmdCoreList() + ")\n", nil
}

func (d *Commands) cmdLookupPrioSet(_ context.Context, args []string) (string, error) {
	n, err := strconv.ParseUint(args[1], 10, 64)
	if err != nil || n > 255 {
		return "", errors.New("error converting priority, use integer in range 0-255\n")
	}
	c := &d.impls
	c.mu.Lock()
	c.init()
	found := false
	for i := range c.prio {
		if c.prio[i].name == args[0] {
			c.prio[i].prio = int(n)
			found = true
		}
	}
	c.mu.Unlock()
	if !found {
		d.logf("dpif_netdev_lookup", "WARN", fmt.Sprintf("Subtable function '%s' not found, failed to set priority\n", args[0]))
		return "", errors.New("error, subtable lookup function not found\n")
	}
	d.logf("dpif_netdev_lookup", "INFO", fmt.Sprintf("Subtable function '%s' set priority to %d\n", args[0], n))
	msg := "Lookup priority change affected 0 dpcls ports and 0 subtables.\n"
	d.logf("dpif_netdev", "INFO", msg)
	return msg, nil
}

func (d *Commands) cmdLookupInfoGet(context.Context, []string) (string, error) {
	c := &d.impls
	c.mu.Lock()
	defer c.mu.Unlock()
	c.init()
	var b strings.Builder
	b.WriteString("Available dpcls implementations:\n")
	for _, l := range c.prio {
		fmt.Fprintf(&b, "  %s (Use count: 0, Priority: %d)\n", l.name, l.prio)
	}
	return b.String(), nil
}

// logf logs a line of a vlog module through the backer's loggers.
func (d *Commands) logf(module, level, msg string) {
	if d.sw == nil {
		return
	}
	l := d.sw.ModuleLogger(module)
	if l == nil {
		return
	}
	switch level {
	case "ERR":
		l.Error(msg)
	case "WARN":
		l.Warn(msg)
	default:
		l.Info(msg)
	}
}
