package vswitchd

import (
	"log/slog"

	"golang.org/x/sys/unix"

	"github.com/gvs-project/gvs/datapath/pmd"
)

// numaLayout is the CPU layout PMD threads are placed on: --dummy-numa's
// when given (its bad entries logged as ovs-numa does), else the
// machine's NUMA nodes and the cores this process may run on.
func numaLayout(dummy string, log *slog.Logger) pmd.Layout {
	if dummy != "" {
		l, warns := pmd.DummyLayout(dummy)
		for _, w := range warns {
			log.Warn(w)
		}
		return l
	}
	l := pmd.DiscoverLayout("/")
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return l
	}
	var cores []pmd.Core
	for _, c := range l.Cores() {
		if set.IsSet(c.ID) {
			cores = append(cores, c)
		}
	}
	if len(cores) == 0 {
		return l
	}
	return pmd.NewLayout(cores)
}
