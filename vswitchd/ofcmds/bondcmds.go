package ofcmds

import (
	"context"

	"github.com/gvs-project/gvs/ofproto/bond"
	"github.com/gvs-project/gvs/unixctl"
)

// bondCommands are Open vSwitch's bond/ and lacp/ commands.
func (d *Commands) bondCommands() []unixctl.Command {
	run := func(f func([]string) (string, error)) func(context.Context, []string) (string, error) {
		return func(_ context.Context, args []string) (string, error) { return f(args) }
	}
	b, l := d.sw.View().Bonds(), d.sw.View().LACPs()
	return []unixctl.Command{
		{Name: "bond/list", Run: run(b.ListCommand)},
		{Name: "bond/show", Usage: "[port]", MaxArgs: 1, Run: run(b.ShowCommand)},
		{Name: "bond/migrate", Usage: "port hash member", MinArgs: 3, MaxArgs: 3, Run: run(b.MigrateCommand)},
		{Name: "bond/set-active-member", Usage: "port member", MinArgs: 2, MaxArgs: 2, Run: run(b.SetActiveMemberCommand)},
		{Name: "bond/enable-member", Usage: "port member", MinArgs: 2, MaxArgs: 2, Run: run(b.EnableMemberCommand)},
		{Name: "bond/disable-member", Usage: "port member", MinArgs: 2, MaxArgs: 2, Run: run(b.DisableMemberCommand)},
		{Name: "bond/hash", Usage: "mac [vlan] [basis]", MinArgs: 1, MaxArgs: 3, Run: run(bond.HashCommand)},
		// The names before Open vSwitch 2.16, still accepted, not listed.
		{Name: "bond/set-active-slave", MinArgs: 2, MaxArgs: 2, Run: run(b.SetActiveMemberCommand), Hidden: true},
		{Name: "bond/enable-slave", MinArgs: 2, MaxArgs: 2, Run: run(b.EnableMemberCommand), Hidden: true},
		{Name: "bond/disable-slave", MinArgs: 2, MaxArgs: 2, Run: run(b.DisableMemberCommand), Hidden: true},
		{Name: "lacp/show", Usage: "[port]", MaxArgs: 1, Run: run(l.ShowCommand)},
		{Name: "lacp/show-stats", Usage: "[port]", MaxArgs: 1, Run: run(l.ShowStatsCommand)},
	}
}
