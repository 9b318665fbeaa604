package dpctl

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/gvs-project/gvs/unixctl"
)

// Open vSwitch's dpif-netdev chooses among SIMD variants of its packet
// input (dpif-impl-*), of its subtable lookup (subtable-lookup-*) and of
// its datapath actions (odp-execute/action-impl-*). gvs has one of each,
// written in Go: the input is listed as dpif_scalar, the lookup as
// generic, the actions as scalar, beside autovalidator (which Open
// vSwitch always offers: it checks every other variant against the
// scalar one, and with none there is nothing to check). The commands
// keep and report the choice and the priorities as Open vSwitch does,
// but nothing in gvs's packet path depends on them.

// implChoice is the commands' state.
type implChoice struct {
	mu sync.Mutex
	// prio is each lookup implementation's priority, in listing order.
	prio []lookupImpl
	// action is the datapath actions' implementation ("" is scalar).
	action string
}

// actionImpls are the datapath actions' implementations, in Open
// vSwitch's listing order.
func actionImpls() [2]string { return [2]string{"scalar", "autovalidator"} }

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
		{Name: "odp-execute/action-impl-set", Usage: "name", MinArgs: 1, MaxArgs: 1, Run: d.cmdActionImplSet},
		{Name: "odp-execute/action-impl-show", Run: d.cmdActionImplShow},
	}
}

func (d *Commands) cmdActionImplSet(_ context.Context, args []string) (string, error) {
	name := args[0]
	if impls := actionImpls(); !slices.Contains(impls[:], name) {
		d.logf("odp_execute", "ERR", "Failed setting action implementation to "+name)
		return "", fmt.Errorf("Error: unknown action implementation, %s, specified!\n", name)
	}
	c := &d.impls
	c.mu.Lock()
	changed := c.activeAction() != name
	c.action = name
	c.mu.Unlock()
	if changed {
		d.logf("odp_execute_impl", "INFO", "Action implementation set to "+name)
	}
	return "Action implementation set to " + name + ".\n", nil
}

func (d *Commands) cmdActionImplShow(context.Context, []string) (string, error) {
	c := &d.impls
	c.mu.Lock()
	active := c.activeAction()
	c.mu.Unlock()
	var b strings.Builder
	b.WriteString("Available Actions implementations:\n")
	for _, n := range actionImpls() {
		yes := "No"
		if n == active {
			yes = "Yes"
		}
		fmt.Fprintf(&b, "  %s (available: Yes, active: %s)\n", n, yes)
	}
	return b.String(), nil
}

// activeAction is the actions' implementation in force (c.mu held).
func (c *implChoice) activeAction() string {
	if c.action == "" {
		return actionImpls()[0]
	}
	return c.action
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
