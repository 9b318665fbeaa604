package pmd

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// placement is "port queue numa core" per queue, sorted by queue, as
// pmd.at's parse_pmd_rxq_show prints it.
func placement(a Assignment) []string {
	var out []string
	for _, t := range a.Threads {
		for _, q := range t.RxQs {
			out = append(out, fmt.Sprintf("%s %d %d %d", q.Port, q.Queue, t.Core.NUMA, t.Core.ID))
		}
	}
	sortStrings(out)
	return out
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func queues(port string, no uint32, n, numa int, aff map[int]int) []RxQ {
	var out []RxQ
	for q := 0; q < n; q++ {
		c, ok := aff[q]
		if !ok {
			c = NoCore
		}
		out = append(out, RxQ{Port: port, PortNo: no, Queue: q, NUMA: numa, Affinity: c})
	}
	return out
}

func mustMask(t *testing.T, l Layout, mask string) []Core {
	t.Helper()
	cs, warns := l.MaskCores(mask)
	if len(warns) != 0 {
		t.Fatalf("mask %s: %v", mask, warns)
	}
	return cs
}

// Each mode spreads 8 queues of one port over two threads as pmd.at's
// "pmd-cpu-mask/distribution of rx queues" expects.
func TestScheduleSpreadsQueuesByModeAsOpenVSwitch(t *testing.T) {
	l, _ := DummyLayout("0,0,0,0")
	cores := mustMask(t, l, "0x3")
	for _, c := range []struct {
		mode Mode
		want [2]string
	}{
		{RoundRobin, [2]string{"0 2 4 6", "1 3 5 7"}},
		{Cycles, [2]string{"0 3 4 7", "1 2 5 6"}},
		{Group, [2]string{"0 2 4 6", "1 3 5 7"}},
	} {
		var logs []string
		a := Schedule(cores, queues("p0", 1, 8, 0, nil), c.mode, true, Info, func(_ Level, f string, args ...any) {
			logs = append(logs, fmt.Sprintf(f, args...))
		})
		var got [2]string
		for i, th := range a.Threads {
			var ids []string
			for _, q := range th.RxQs {
				ids = append(ids, fmt.Sprint(q.Queue))
			}
			got[i] = strings.Join(ids, " ")
		}
		if got != c.want {
			t.Errorf("%s: threads poll %q, want %q", c.mode, got, c.want)
		}
		if want := fmt.Sprintf("Performing pmd to rx queue assignment using %s algorithm.", c.mode); logs[0] != want {
			t.Errorf("%s: first log %q, want %q", c.mode, logs[0], want)
		}
	}
}

// pmd.at's "rxq affinity": pinned queues go to their cores; when a core
// leaves the mask its queue goes to a non-isolated thread.
func TestScheduleHonoursAffinityAndIsolation(t *testing.T) {
	l, _ := DummyLayout("0,0,0,0,0,0,0,0,0")
	aff := map[int]int{0: 3, 1: 7, 2: 2, 3: 8}
	a := Schedule(mustMask(t, l, "0x1fe"), queues("p1", 1, 4, 0, aff), Cycles, true, Info, nil)
	if got, want := placement(a), []string{"p1 0 0 3", "p1 1 0 7", "p1 2 0 2", "p1 3 0 8"}; !reflect.DeepEqual(got, want) {
		t.Errorf("mask 0x1fe: %q, want %q", got, want)
	}
	var warns []string
	a = Schedule(mustMask(t, l, "6"), queues("p1", 1, 4, 0, aff), Cycles, true, Info, func(lv Level, f string, args ...any) {
		if lv == Warn {
			warns = append(warns, fmt.Sprintf(f, args...))
		}
	})
	if got, want := placement(a), []string{"p1 0 0 1", "p1 1 0 1", "p1 2 0 2", "p1 3 0 1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("mask 6: %q, want %q", got, want)
	}
	if len(warns) != 3 || warns[0] != "Core  3 cannot be pinned with port 'p1' rx queue 0. Use pmd-cpu-mask to enable a pmd on core 3. An alternative core will be assigned." {
		t.Errorf("warnings %q", warns)
	}
	// Not isolating (group): the pinned core takes other queues too.
	a = Schedule(mustMask(t, l, "6"), queues("p1", 1, 4, 0, map[int]int{0: 1}), Group, false, Info, nil)
	if got, want := placement(a), []string{"p1 0 0 1", "p1 1 0 2", "p1 2 0 1", "p1 3 0 2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("group, not isolating: %q, want %q", got, want)
	}
}

// pmd.at's "pmd-cpu-mask - dual NUMA": without a thread on the port's
// node the queues go to the other node's threads, each with a warning.
func TestScheduleCrossesNUMAWhenThePortsNodeHasNoThread(t *testing.T) {
	l, _ := DummyLayout("1,1,0,0")
	var logs []string
	a := Schedule(mustMask(t, l, "0xc"), queues("p0", 1, 8, 1, nil), Cycles, true, Info, func(_ Level, f string, args ...any) {
		logs = append(logs, fmt.Sprintf(f, args...))
	})
	if !a.CrossNUMA() {
		t.Error("CrossNUMA false")
	}
	want := "There's no available (non-isolated) pmd thread on numa node 1. Port 'p0' rx queue 7 will be assigned to a pmd on numa node 0. This may lead to reduced performance."
	found := false
	for _, s := range logs {
		found = found || s == want
	}
	if !found {
		t.Errorf("no %q in %q", want, logs)
	}
}

func TestLayoutMaskAndDefaults(t *testing.T) {
	l, warns := DummyLayout("0,1,8")
	if len(warns) != 0 {
		t.Fatal(warns)
	}
	if got := l.FirstCores(1); !reflect.DeepEqual(got, []Core{{0, 0}, {1, 1}, {2, 8}}) {
		t.Errorf("first cores %v", got)
	}
	if got, _ := l.MaskCores("0x6"); !reflect.DeepEqual(got, []Core{{1, 1}, {2, 8}}) {
		t.Errorf("mask 0x6: %v", got)
	}
	if got, w := l.MaskCores("3g"); !reflect.DeepEqual(got, []Core(nil)) || !reflect.DeepEqual(w, []string{"Invalid cpu mask: g"}) {
		t.Errorf("mask 3g (cores 4 and 5, absent): %v %q", got, w)
	}
	if got := l.DiscoveryLog(); got[len(got)-1] != "Discovered 3 NUMA nodes and 3 CPU cores" {
		t.Errorf("discovery log %q", got)
	}
}
