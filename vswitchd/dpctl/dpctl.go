package dpctl

import (
	"sync"

	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/datapath/dpnetdev"
	"github.com/gvs-project/gvs/unixctl"
	"github.com/gvs-project/gvs/vswitchd/backer"
)

// Config is how the daemon was started, as the commands need it.
type Config struct {
	// Program names the daemon in dpctl's error messages.
	Program string
	// DummyOverride (--enable-dummy=override) makes dpctl/add-if create
	// dummy devices for every type.
	DummyOverride bool
}

// Commands are the datapath's unixctl commands over a backer's
// datapaths and those dpctl/add-dp creates (which no bridge uses).
type Commands struct {
	sw  *backer.Backer
	cfg Config

	mu sync.Mutex
	// impls are the dpif-impl and subtable-lookup choices (implcmds.go).
	impls implChoice
	// dpctlDPs are the datapaths dpctl/add-dp created, by name
	// (dpctlcmds.go).
	dpctlDPs map[string]*dpctlDP
}

// New returns the commands over sw's datapaths.
func New(sw *backer.Backer, cfg Config) *Commands {
	return &Commands{sw: sw, cfg: cfg}
}

// List is the command table: dpif/show, dpctl/*, dpif-netdev/*,
// upcall/show, dpif/dump-dps and netdev-dummy/*.
func (d *Commands) List() []unixctl.Command {
	cmds := []unixctl.Command{
		{Name: "dpif/show", Run: d.cmdDpifShow},
		{Name: "dpctl/show", Usage: "[-s] [dp...]", MaxArgs: unixctl.Unlimited, Run: d.cmdDpctlShow},
		{Name: "dpctl/dump-flows", Usage: "[-m] [--names] [dp] [filter=..] [type=..] [pmd=..]", MaxArgs: 6, Run: d.cmdDumpFlows},
		{Name: "dpctl/add-flow", Usage: "[dp] flow actions", MinArgs: 2, MaxArgs: 3, Run: d.cmdPutFlow(dpif.PutCreate)},
		{Name: "dpctl/mod-flow", Usage: "[dp] flow actions", MinArgs: 2, MaxArgs: 3, Run: d.cmdPutFlow(dpif.PutModify)},
		{Name: "dpctl/del-flow", Usage: "[dp] flow", MinArgs: 1, MaxArgs: 2, Run: d.cmdDelFlow},
		{Name: "dpctl/get-flow", Usage: "[dp] ufid", MinArgs: 1, MaxArgs: 2, Run: d.cmdGetFlow},
		{Name: "dpctl/del-flows", Usage: "[dp] [file]", MaxArgs: 2, Run: d.cmdDelFlows},
		{Name: "netdev-dummy/receive", Usage: "name [--qid queue_id] packet|flow [--len packet_len]", MinArgs: 2, MaxArgs: unixctl.Unlimited, Run: d.cmdDummyReceive},
	}
	cmds = append(cmds, d.pmdCommands()...)
	cmds = append(cmds, d.implCommands()...)
	cmds = append(cmds, d.dpctlCommands()...)
	cmds = append(cmds,
		unixctl.Command{Name: "dpif/dump-dps", Run: d.cmdDpifDumpDps},
		unixctl.Command{Name: "dpctl/dump-dps", Usage: "", Run: d.cmdDpctlDumpDps},
		unixctl.Command{Name: "netdev-dummy/set-admin-state", Usage: "[netdev] up|down", MinArgs: 1, MaxArgs: 2, Run: d.cmdDummySetAdminState},
		unixctl.Command{Name: "netdev-dummy/conn-state", Usage: "[netdev]", MaxArgs: 1, Run: d.cmdDummyConnState})
	return cmds
}

// Find resolves a dpctl datapath argument ("netdev@ovs-netdev",
// "ovs-netdev" or the type), or the only datapath when name is "".
func (d *Commands) Find(name string) (*dpnetdev.Datapath, error) { return d.findDatapath(name) }

// Close closes the datapaths dpctl/add-dp created.
func (d *Commands) Close() {
	d.mu.Lock()
	extra := d.dpctlDPs
	d.dpctlDPs = nil
	d.mu.Unlock()
	for _, x := range extra {
		backer.CloseDatapath(x.dp)
	}
}

// datapaths returns the bridges' datapaths sorted by name.
func (d *Commands) datapaths() []*dpnetdev.Datapath { return d.sw.Datapaths() }
