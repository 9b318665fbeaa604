package pmd

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
)

// Core is a CPU core and the NUMA node it belongs to.
type Core struct {
	ID   int
	NUMA int
}

// maxNUMANodes bounds node ids as Open vSwitch's ovs-numa does.
const maxNUMANodes = 128

// Layout is the machine's CPU cores, in core id order.
type Layout struct {
	cores []Core
}

// NewLayout returns the layout of the given cores (sorted by id).
func NewLayout(cores []Core) Layout {
	c := append([]Core(nil), cores...)
	sort.Slice(c, func(i, j int) bool { return c[i].ID < c[j].ID })
	return Layout{cores: c}
}

// DummyLayout parses --dummy-numa's list: the i-th comma-separated entry
// is core i's node. Entries out of range are skipped (the core id still
// counts), each with a warning in Open vSwitch's words.
func DummyLayout(spec string) (Layout, []string) {
	var cores []Core
	var warns []string
	i := 0
	for _, f := range strings.Split(spec, ",") {
		if f == "" {
			continue
		}
		n := leadingInt(f)
		if n < 0 || n >= maxNUMANodes {
			warns = append(warns, fmt.Sprintf("Invalid numa node %d", n))
			continue
		}
		cores = append(cores, Core{ID: i, NUMA: n})
		i++
	}
	return NewLayout(cores), warns
}

// leadingInt parses an optionally signed decimal prefix as strtol does
// (0 when there is none).
func leadingInt(s string) int {
	s = strings.TrimSpace(s)
	end := 0
	if end < len(s) && (s[end] == '-' || s[end] == '+') {
		end++
	}
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	n, err := strconv.Atoi(s[:end])
	if err != nil {
		return 0
	}
	return n
}

// DiscoverLayout reads the layout from sysfs under root (normally "/"):
// each /sys/devices/system/node/nodeN's online cpuM. Without NUMA
// information every online CPU is on node 0, as ovs-numa assumes.
func DiscoverLayout(root string) Layout {
	var cores []Core
	nodes, _ := filepath.Glob(filepath.Join(root, "sys/devices/system/node/node[0-9]*"))
	for _, nd := range nodes {
		n, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(nd), "node"))
		if err != nil {
			continue
		}
		cpus, _ := filepath.Glob(filepath.Join(nd, "cpu[0-9]*"))
		for _, c := range cpus {
			id, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(c), "cpu"))
			if err != nil || !cpuOnline(c) {
				continue
			}
			cores = append(cores, Core{ID: id, NUMA: n})
		}
	}
	if len(cores) == 0 {
		for i := 0; i < runtime.NumCPU(); i++ {
			cores = append(cores, Core{ID: i})
		}
	}
	return NewLayout(cores)
}

// cpuOnline reports whether a sysfs cpu directory's "online" file says 1
// (cpu0 usually has none: it is always online).
func cpuOnline(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "online"))
	if err != nil {
		return true
	}
	return strings.TrimSpace(string(b)) == "1"
}

// Cores returns the cores in id order.
func (l Layout) Cores() []Core { return append([]Core(nil), l.cores...) }

// Core returns the core with that id.
func (l Layout) Core(id int) (Core, bool) {
	for _, c := range l.cores {
		if c.ID == id {
			return c, true
		}
	}
	return Core{}, false
}

// Nodes returns the NUMA node ids, ascending.
func (l Layout) Nodes() []int {
	var out []int
	seen := map[int]bool{}
	for _, c := range l.cores {
		if !seen[c.NUMA] {
			seen[c.NUMA] = true
			out = append(out, c.NUMA)
		}
	}
	sort.Ints(out)
	return out
}

// NodeCores returns the cores of one node in id order.
func (l Layout) NodeCores(numa int) []Core {
	var out []Core
	for _, c := range l.cores {
		if c.NUMA == numa {
			out = append(out, c)
		}
	}
	return out
}

// DiscoveryLog is what ovs-numa logs once it has the layout: the cores
// of each node, then the totals.
func (l Layout) DiscoveryLog() []string {
	var out []string
	for _, n := range l.Nodes() {
		out = append(out, fmt.Sprintf("Discovered %d CPU cores on NUMA node %d", len(l.NodeCores(n)), n))
	}
	return append(out, fmt.Sprintf("Discovered %d NUMA nodes and %d CPU cores", len(l.Nodes()), len(l.cores)))
}

// MaskCores returns the cores a pmd-cpu-mask selects: a hexadecimal
// number (optional 0x), its least significant bit core 0; bits of cores
// the layout lacks are ignored. Characters that are not hex digits
// count as 0, each with a warning in Open vSwitch's words.
func (l Layout) MaskCores(mask string) ([]Core, []string) {
	var out []Core
	var warns []string
	start := 0
	if strings.HasPrefix(mask, "0x") || strings.HasPrefix(mask, "0X") {
		start = 2
	}
	id := 0
	for i := len(mask) - 1; i >= start; i-- {
		v, err := strconv.ParseUint(mask[i:i+1], 16, 8)
		if err != nil {
			warns = append(warns, fmt.Sprintf("Invalid cpu mask: %c", mask[i]))
			v = 0
		}
		for j := 0; j < 4; j++ {
			if v>>j&1 == 1 {
				if c, ok := l.Core(id); ok {
					out = append(out, c)
				}
			}
			id++
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, warns
}

// FirstCores returns up to n cores of each node, the lowest ids first:
// the PMD cores without a mask (one per node).
func (l Layout) FirstCores(n int) []Core {
	var out []Core
	for _, nd := range l.Nodes() {
		cs := l.NodeCores(nd)
		if len(cs) > n {
			cs = cs[:n]
		}
		out = append(out, cs...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// PMDCores returns the cores that run PMD threads: none when the
// datapath has no port that PMD threads poll, the mask's cores when a
// mask is set, else the first core of every node.
func (l Layout) PMDCores(mask string, hasPMDPort bool) ([]Core, []string) {
	switch {
	case !hasPMDPort:
		return nil, nil
	case mask != "":
		return l.MaskCores(mask)
	}
	return l.FirstCores(1), nil
}
