package ctcmds

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/datapath/conntrack"
	"github.com/gvs-project/gvs/datapath/dpnetdev"
	"github.com/gvs-project/gvs/unixctl"
)

// Commands are the conntrack commands over the datapaths a resolver
// finds by dpctl's datapath argument.
type Commands struct {
	program string
	find    func(name string) (*dpnetdev.Datapath, error)
}

// New returns the commands; program prefixes errors as dpctl's do
// ("ovs-vswitchd: ..."), find resolves a datapath argument ("" for the
// only datapath), as dpctl.Commands.Find.
func New(program string, find func(name string) (*dpnetdev.Datapath, error)) *Commands {
	return &Commands{program: program, find: find}
}

// errf is an error worded as Open vSwitch's dpctl reports it.
func (d *Commands) errf(format string, args ...any) error {
	return fmt.Errorf("%s: "+format, append([]any{d.program}, args...)...)
}

// List is Open vSwitch's dpctl/*conntrack* and dpctl/ct-*
// commands, over the datapath's per-zone connection tracker.
func (d *Commands) List() []unixctl.Command {
	return []unixctl.Command{
		{Name: "dpctl/dump-conntrack", Usage: "[-m] [-s] [dp] [zone=N]", MaxArgs: 4, Run: d.cmdDumpConntrack},
		{Name: "dpctl/flush-conntrack", Usage: "[dp] [zone=N] [ct-orig-tuple] [ct-reply-tuple]", MaxArgs: 4, Run: d.cmdFlushConntrack},
		{Name: "dpctl/ct-stats-show", Usage: "[dp] [zone=N]", MaxArgs: 3, Run: d.cmdCtStatsShow},
		{Name: "dpctl/ct-get-nconns", Usage: "[dp]", MaxArgs: 1, Run: d.ctSimple(func(t *conntrack.Tracker) string { return fmt.Sprintf("%d\n", t.Count()) })},
		{Name: "dpctl/ct-get-maxconns", Usage: "[dp]", MaxArgs: 1, Run: d.ctSimple(func(t *conntrack.Tracker) string { return strconv.FormatUint(uint64(t.MaxConns()), 10) + "\n" })},
		{Name: "dpctl/ct-set-maxconns", Usage: "[dp] maxconns", MinArgs: 1, MaxArgs: 2, Run: d.cmdCtSetMaxConns},
		{Name: "dpctl/ct-enable-tcp-seq-chk", Usage: "[dp]", MaxArgs: 1, Run: d.ctSimple(func(t *conntrack.Tracker) string {
			t.SetTCPLiberal(false)
			return "enabling TCP sequence checking successful\n"
		})},
		{Name: "dpctl/ct-disable-tcp-seq-chk", Usage: "[dp]", MaxArgs: 1, Run: d.ctSimple(func(t *conntrack.Tracker) string {
			t.SetTCPLiberal(true)
			return "disabling TCP sequence checking successful\n"
		})},
		{Name: "dpctl/ct-get-tcp-seq-chk", Usage: "[dp]", MaxArgs: 1, Run: d.ctSimple(func(t *conntrack.Tracker) string {
			if t.TCPLiberal() {
				return "TCP sequence checking: disabled\n"
			}
			return "TCP sequence checking: enabled\n"
		})},
		{Name: "dpctl/ct-set-limits", Usage: "[dp] [default=L] [zone=N,limit=L]...", MaxArgs: unixctl.Unlimited, Run: d.cmdCtSetLimits},
		{Name: "dpctl/ct-del-limits", Usage: "[dp] zone=N1[,N2]...", MinArgs: 1, MaxArgs: 2, Run: d.cmdCtDelLimits},
		{Name: "dpctl/ct-get-limits", Usage: "[dp] [zone=N1[,N2]...]", MaxArgs: 2, Run: d.cmdCtGetLimits},
	}
}

// ctArgs splits off a leading datapath name (an argument without '=' that
// is not an option) and returns the tracker and the remaining arguments.
func (d *Commands) ctArgs(args []string) (*conntrack.Tracker, []string, error) {
	name := ""
	var rest []string
	for i, a := range args {
		if i == 0 && a != "" && !strings.Contains(a, "=") && !strings.HasPrefix(a, "-") && !isNumber(a) && a != "verbose" {
			name = a
			continue
		}
		rest = append(rest, a)
	}
	dp, err := d.find(name)
	if err != nil {
		return nil, nil, err
	}
	return trackerOf(dp), rest, nil
}

func trackerOf(dp *dpnetdev.Datapath) *conntrack.Tracker { return dp.Conntrack() }

func isNumber(s string) bool {
	_, err := strconv.ParseUint(s, 10, 64)
	return err == nil
}

func parseZone(s string) (uint16, error) {
	n, err := strconv.ParseUint(strings.TrimPrefix(s, "zone="), 10, 16)
	if err != nil {
		return 0, fmt.Errorf("failed to parse zone: %s", s)
	}
	return uint16(n), nil
}

func (d *Commands) ctSimple(f func(*conntrack.Tracker) string) unixctl.Handler {
	return func(_ context.Context, args []string) (string, error) {
		t, _, err := d.ctArgs(args)
		if err != nil {
			return "", err
		}
		return f(t), nil
	}
}

// zoneAndFlags parses "zone=N" and the given flag words (each setting its
// bool) from dpctl arguments.
func zoneAndFlags(args []string, flags map[string]*bool) (*uint16, error) {
	var zone *uint16
	for _, a := range args {
		if f, ok := flags[a]; ok {
			*f = true
			continue
		}
		if !strings.HasPrefix(a, "zone=") {
			return nil, fmt.Errorf("invalid argument %q", a)
		}
		z, err := parseZone(a)
		if err != nil {
			return nil, err
		}
		zone = &z
	}
	return zone, nil
}

func (d *Commands) cmdDumpConntrack(_ context.Context, args []string) (string, error) {
	t, rest, err := d.ctArgs(args)
	if err != nil {
		return "", err
	}
	stats, more := false, false
	zone, err := zoneAndFlags(rest, map[string]*bool{"-s": &stats, "--statistics": &stats, "-m": &more, "--more": &more})
	if err != nil {
		return "", err
	}
	return conntrack.FormatDump(t.Dump(zone), stats), nil
}

func (d *Commands) cmdFlushConntrack(_ context.Context, args []string) (string, error) {
	t, rest, err := d.ctArgs(args)
	if err != nil {
		return "", err
	}
	var zone *uint16
	if len(rest) > 0 && strings.HasPrefix(rest[0], "zone=") {
		z, err := parseZone(rest[0])
		if err != nil {
			return "", d.errf("failed to parse zone (Invalid argument)")
		}
		zone = &z
		rest = rest[1:]
	}
	// Up to two tuples, original then reply; an empty one is skipped.
	var m conntrack.Match
	for _, tp := range []*conntrack.TupleMatch{&m.Orig, &m.Reply} {
		if len(rest) == 0 {
			break
		}
		if rest[0] != "" {
			if err := m.ParseTupleMatch(tp, rest[0]); err != nil {
				return "", d.errf("%v (Invalid argument)", err)
			}
		}
		rest = rest[1:]
	}
	if len(rest) > 1 { // one more is dpctl's datapath argument, as in Open vSwitch
		return "", d.errf("invalid arguments (Invalid argument)")
	}
	if _, err := t.Flush(zone, &m); err != nil {
		return "", d.errf("failed to flush conntrack (No such file or directory)")
	}
	return "", nil
}

func (d *Commands) cmdCtStatsShow(_ context.Context, args []string) (string, error) {
	t, rest, err := d.ctArgs(args)
	if err != nil {
		return "", err
	}
	verbose := false
	zone, err := zoneAndFlags(rest, map[string]*bool{"verbose": &verbose, "-m": &verbose, "--more": &verbose})
	if err != nil {
		return "", err
	}
	return conntrack.FormatStats(t.Dump(zone), verbose), nil
}

func (d *Commands) cmdCtSetMaxConns(_ context.Context, args []string) (string, error) {
	t, rest, err := d.ctArgs(args)
	if err != nil {
		return "", err
	}
	if len(rest) != 1 {
		return "", fmt.Errorf("maxconns missing or malformed")
	}
	n, err := strconv.ParseUint(rest[0], 10, 32)
	if err != nil {
		return "", fmt.Errorf("maxconns missing or malformed")
	}
	t.SetMaxConns(uint32(n))
	return "setting maxconns successful\n", nil
}

func (d *Commands) cmdCtSetLimits(_ context.Context, args []string) (string, error) {
	t, rest, err := d.ctArgs(args)
	if err != nil {
		return "", err
	}
	var def *uint32
	zones := map[uint16]uint32{}
	for _, a := range rest {
		if v, ok := strings.CutPrefix(a, "default="); ok {
			n, err := strconv.ParseUint(v, 10, 32)
			if err != nil {
				return "", fmt.Errorf("invalid default limit")
			}
			l := uint32(n)
			def = &l
			continue
		}
		zs, ls, ok := strings.Cut(a, ",")
		if !ok || !strings.HasPrefix(zs, "zone=") || !strings.HasPrefix(ls, "limit=") {
			return "", fmt.Errorf("failed to parse zone limit: %s", a)
		}
		z, err := parseZone(zs)
		if err != nil {
			return "", err
		}
		n, err := strconv.ParseUint(strings.TrimPrefix(ls, "limit="), 10, 32)
		if err != nil {
			return "", fmt.Errorf("failed to parse zone limit: %s", a)
		}
		zones[z] = uint32(n)
	}
	t.SetLimits(def, zones)
	return "", nil
}

func zoneList(s string) ([]uint16, error) {
	var out []uint16
	for _, f := range strings.Split(strings.TrimPrefix(s, "zone="), ",") {
		z, err := parseZone(f)
		if err != nil {
			return nil, err
		}
		out = append(out, z)
	}
	return out, nil
}

func (d *Commands) cmdCtDelLimits(_ context.Context, args []string) (string, error) {
	t, rest, err := d.ctArgs(args)
	if err != nil {
		return "", err
	}
	if len(rest) != 1 {
		return "", fmt.Errorf("invalid argument")
	}
	zs, err := zoneList(rest[0])
	if err != nil {
		return "", err
	}
	t.DeleteLimits(zs...)
	return "", nil
}

func (d *Commands) cmdCtGetLimits(_ context.Context, args []string) (string, error) {
	t, rest, err := d.ctArgs(args)
	if err != nil {
		return "", err
	}
	var zs []uint16
	if len(rest) == 1 {
		if zs, err = zoneList(rest[0]); err != nil {
			return "", err
		}
	}
	return conntrack.FormatLimits(t.Limits(zs...)), nil
}
