package vsctl_test

import (
	"strings"
	"testing"
)

// FuzzRunArguments feeds arbitrary command lines to Run (with --dry-run,
// so the database stays as seeded) and requires an ordinary exit status:
// no panic, no hang, no status other than ovs-vsctl's.
func FuzzRunArguments(f *testing.F) {
	for _, s := range []string{
		"add-br br1", "add-port br0 p9 tag=1 -- set Interface p9 type=dummy", "show", "list Bridge",
		"--columns=name find Port tag{>=}[1]", "-- --id=@m create Mirror name=m -- add Bridge br0 mirrors @m",
		"set Bridge br0 other_config:a={b=c}", "remove Bridge br0 other_config a=b c", "destroy Port p1",
		"get Open_vSwitch . bridges", "--bare --format=table list Interface", "set-controller br0 x y -- del-br br0",
	} {
		f.Add(s)
	}
	db := "--db=unix:" + startServer(f)
	if r := runGVS(db, "--no-wait", "add-br", "br0", "--", "add-port", "br0", "p1"); r.code != 0 {
		f.Fatalf("seeding: %+v", r)
	}
	f.Fuzz(func(t *testing.T, line string) {
		args := append([]string{db, "--no-wait", "--dry-run", "--timeout=5"}, strings.Fields(line)...)
		for _, a := range args[4:] {
			if strings.HasPrefix(a, "--db") || a == "--help" || a == "-h" {
				return
			}
		}
		r := runGVS(args...)
		if r.code != 0 && r.code != 1 && r.code != 2 {
			t.Fatalf("%q: exit %d, %q", line, r.code, r.stderr)
		}
	})
}
