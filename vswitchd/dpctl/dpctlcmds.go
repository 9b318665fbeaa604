package dpctl

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/datapath/dpnetdev"
	"github.com/gvs-project/gvs/datapath/netdev/dummy"
	"github.com/gvs-project/gvs/unixctl"
	"github.com/gvs-project/gvs/vswitchd/backer"
)

// dpctlDP is a datapath created with dpctl/add-dp: it has no bridge, as
// in Open vSwitch, where such a datapath is not a bridge's backer.
type dpctlDP struct {
	typ string
	dp  *dpnetdev.Datapath
}

// dpctlCommands are dpctl's datapath and port management commands
// (dpctl.at): add-dp, del-dp, add-if, set-if, del-if and the file forms
// of add-flows, mod-flows and del-flows. Errors carry the program name
// as Open vSwitch's dpctl prints them ("ovs-vswitchd: add_dp (File
// exists)").
func (d *Commands) dpctlCommands() []unixctl.Command {
	return []unixctl.Command{
		{Name: "dpctl/add-dp", Usage: "dp [iface...]", MinArgs: 1, MaxArgs: unixctl.Unlimited, Run: d.cmdAddDP},
		{Name: "dpctl/del-dp", Usage: "dp", MinArgs: 1, MaxArgs: 1, Run: d.cmdDelDP},
		{Name: "dpctl/add-if", Usage: "dp iface...", MinArgs: 2, MaxArgs: unixctl.Unlimited, Run: d.cmdAddIf},
		{Name: "dpctl/set-if", Usage: "dp iface...", MinArgs: 2, MaxArgs: unixctl.Unlimited, Run: d.cmdSetIf},
		{Name: "dpctl/del-if", Usage: "dp iface...", MinArgs: 2, MaxArgs: unixctl.Unlimited, Run: d.cmdDelIf},
		{Name: "dpctl/add-flows", Usage: "[dp] file", MinArgs: 1, MaxArgs: 2, Run: d.cmdFlowsFile("add")},
		{Name: "dpctl/mod-flows", Usage: "[dp] file", MinArgs: 1, MaxArgs: 2, Run: d.cmdFlowsFile("modify")},
	}
}

func (d *Commands) dpctlErr(format string, args ...any) error {
	return fmt.Errorf("%s: "+format, append([]any{d.cfg.Program}, args...)...)
}

// parseDPName splits dpctl's TYPE@NAME (TYPE defaults to "system").
func parseDPName(s string) (typ, name string) {
	if i := strings.IndexByte(s, '@'); i >= 0 {
		return s[:i], s[i+1:]
	}
	return "system", s
}

// fullDPName is a datapath's TYPE@NAME as dpctl/show prints it.
func (d *Commands) fullDPName(dp *dpnetdev.Datapath) string {
	if x, ok := d.dpctlDatapath(dp.Name()); ok && x.dp == dp {
		return x.typ + "@" + dp.Name()
	}
	return DPName(dp)
}

// dpctlDatapath finds a dpctl/add-dp datapath by NAME or TYPE@NAME.
func (d *Commands) dpctlDatapath(arg string) (*dpctlDP, bool) {
	_, name := parseDPName(arg)
	d.mu.Lock()
	defer d.mu.Unlock()
	x, ok := d.dpctlDPs[name]
	return x, ok
}

func (d *Commands) cmdAddDP(_ context.Context, args []string) (string, error) {
	typ, name := parseDPName(args[0])
	if typ != "dummy" && typ != "netdev" {
		return "", d.dpctlErr("add_dp (Address family not supported by protocol)")
	}
	d.mu.Lock()
	_, dup := d.dpctlDPs[name]
	for _, dp := range d.datapaths() {
		dup = dup || dp.Name() == name
	}
	if dup {
		d.mu.Unlock()
		return "", d.dpctlErr("add_dp (File exists)")
	}
	cfg := dpif.DefaultConfig()
	if d.sw != nil {
		cfg.Log = d.sw.ModuleLogger("dpif_netdev")
	}
	dp := dpnetdev.New(name, cfg)
	if d.sw != nil {
		d.sw.PlacePMDs(dp)
	}
	// The datapath's own internal port 0, named after it.
	if dev, err := dummy.New(dummy.Config{Name: name, Internal: true, MAC: d.sw.NextDummyMAC()}); err == nil {
		dp.AddPort(dev, 0)
	}
	if err := dp.Start(); err != nil {
		d.mu.Unlock()
		return "", d.dpctlErr("add_dp (%v)", err)
	}
	if d.dpctlDPs == nil {
		d.dpctlDPs = map[string]*dpctlDP{}
	}
	d.dpctlDPs[name] = &dpctlDP{typ: typ, dp: dp}
	d.mu.Unlock()
	if len(args) > 1 {
		return d.cmdAddIf(context.Background(), args)
	}
	return "", nil
}

func (d *Commands) cmdDelDP(_ context.Context, args []string) (string, error) {
	_, name := parseDPName(args[0])
	d.mu.Lock()
	x, ok := d.dpctlDPs[name]
	delete(d.dpctlDPs, name)
	d.mu.Unlock()
	if !ok {
		return "", d.dpctlErr("opening datapath (No such device)")
	}
	backer.CloseDatapath(x.dp)
	return "", nil
}

// ifaceSpec is dpctl's NAME[,type=TYPE][,port_no=N][,KEY=VALUE...].
type ifaceSpec struct {
	name, typ string
	portNo    int64 // -1: unset
}

func parseIfaceSpec(s string) ifaceSpec {
	parts := strings.Split(s, ",")
	sp := ifaceSpec{name: parts[0], portNo: -1}
	for _, kv := range parts[1:] {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "type":
			sp.typ = v
		case "port_no":
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				sp.portNo = n
			}
		}
	}
	return sp
}

func (d *Commands) cmdAddIf(_ context.Context, args []string) (string, error) {
	x, ok := d.dpctlDatapath(args[0])
	if !ok {
		return "", d.dpctlErr("opening datapath (No such device)")
	}
	for _, a := range args[1:] {
		sp := parseIfaceSpec(a)
		typ := sp.typ
		if typ == "" {
			typ = "system"
		}
		if typ != "dummy" && typ != dummy.TypePMD && typ != "internal" && typ != dummy.TypeInternal && !d.cfg.DummyOverride {
			return "", d.dpctlErr("%s: can't add port of type %s", sp.name, typ)
		}
		pmdPort := typ == dummy.TypePMD
		dev, err := dummy.New(dummy.Config{Name: sp.name, Internal: typ != "dummy" && typ != "system" && !pmdPort, PMD: pmdPort, MAC: d.sw.NextDummyMAC()})
		if err != nil {
			return "", d.dpctlErr("adding %s to %s failed (%v)", sp.name, args[0], err)
		}
		want := dpif.PortNone
		if sp.portNo >= 0 {
			want = dpif.PortNo(sp.portNo)
		}
		if _, err := x.dp.AddPort(dev, want); err != nil {
			dev.Close()
			reason := "Invalid argument"
			if errors.Is(err, dpif.ErrNameInUse) || errors.Is(err, dpif.ErrPortInUse) {
				reason = "File exists"
			}
			return "", d.dpctlErr("adding %s to %s failed (%s)", sp.name, args[0], reason)
		}
	}
	return "", nil
}

// cmdSetIf changes nothing gvs can change: it checks, as Open vSwitch
// does, that the port exists and that neither its type nor its number
// would change.
func (d *Commands) cmdSetIf(_ context.Context, args []string) (string, error) {
	x, ok := d.dpctlDatapath(args[0])
	if !ok {
		return "", d.dpctlErr("opening datapath (No such device)")
	}
	for _, a := range args[1:] {
		sp := parseIfaceSpec(a)
		p, ok := x.dp.PortByName(sp.name)
		if !ok {
			return "", d.dpctlErr("no port named %s", sp.name)
		}
		if sp.typ != "" && sp.typ != p.Type {
			return "", d.dpctlErr("%s: can't change type from %s to %s", sp.name, p.Type, sp.typ)
		}
		if sp.portNo >= 0 && dpif.PortNo(sp.portNo) != p.No {
			return "", d.dpctlErr("%s: can't change port number from %d to %d", sp.name, p.No, sp.portNo)
		}
	}
	return "", nil
}

func (d *Commands) cmdDelIf(_ context.Context, args []string) (string, error) {
	x, ok := d.dpctlDatapath(args[0])
	if !ok {
		return "", d.dpctlErr("opening datapath (No such device)")
	}
	for _, name := range args[1:] {
		p, ok := x.dp.PortByName(name)
		if !ok {
			return "", d.dpctlErr("no port named %s", name)
		}
		if p.No == 0 {
			// The datapath's own port goes only with the datapath.
			return "", d.dpctlErr("deleting port %s from %s failed (Invalid argument)", name, args[0])
		}
		if err := x.dp.DelPort(p.No); err != nil {
			return "", d.dpctlErr("deleting port %s from %s failed (%v)", name, args[0], err)
		}
		p.Device.Close()
	}
	return "", nil
}

// cmdFlowsFile is dpctl/add-flows and mod-flows: each line of the file
// is "FLOW ACTIONS", or "add|modify|delete FLOW [ACTIONS]".
func (d *Commands) cmdFlowsFile(def string) unixctl.Handler {
	return func(_ context.Context, args []string) (string, error) {
		name, rest := splitDP(args, 1)
		dp, err := d.findDatapath(name)
		if err != nil {
			return "", err
		}
		return "", d.applyFlowsFile(dp, rest[0], def)
	}
}

func (d *Commands) applyFlowsFile(dp *dpnetdev.Datapath, path, def string) error {
	f, err := os.Open(path)
	if err != nil {
		return d.dpctlErr("%s: %v", path, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		op := def
		if w, r, ok := strings.Cut(line, " "); ok && (w == "add" || w == "modify" || w == "delete") {
			op, line = w, strings.TrimSpace(r)
		}
		// The flow is the first token (it has no spaces); the rest are
		// the actions.
		fl, acts, _ := strings.Cut(line, " ")
		acts = strings.TrimSpace(acts)
		switch op {
		case "add":
			err = putFlow(dp, fl, acts, dpif.PutCreate)
		case "modify":
			err = putFlow(dp, fl, acts, dpif.PutModify)
		default:
			err = delFlow(dp, fl)
		}
		if err != nil {
			return err
		}
	}
	return sc.Err()
}
