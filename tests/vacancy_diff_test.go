package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// vacancySession is Open vSwitch's vacancy check (ofproto.at,
// "asynchronous message control (OpenFlow 1.4)", OFPTR_VACANCY_UP) with
// a bundle added: table 1 limited to 10 flows, an OpenFlow 1.4 monitor
// that asked for table status, vacancy events on at 20 % / 80 %, flows
// added and deleted one at a time across both thresholds, events turned
// off and on again in the middle, then ten flows in one bundle and one
// delete of them all. It returns the monitor's log and table 1's
// description at three points.
func vacancySession(t *testing.T, env []string) string {
	t.Helper()
	setUpOneBridge(t, env)
	run(t, env, "ovs-vsctl", "--timeout=20", "--", "--id=@t1", "create", "Flow_Table", "flow-limit=10",
		"--", "set", "bridge", "br0", "flow_tables:1=@t1")
	mon, appctl := startOF14Monitor(t, env)
	appctl("ofctl/send", "051c001000000002"+"0009000800000018") // set_async: table status (primary) VACANCY_DOWN|UP
	appctl("ofctl/barrier")
	ofctl := func(args ...string) { run(t, env, append([]string{"ovs-ofctl", "-O", "OpenFlow14"}, args...)...) }
	var desc []string
	table1 := func() {
		out := run(t, env, "ovs-ofctl", "-O", "OpenFlow14", "dump-table-desc", "br0")
		if i := strings.Index(out, "\n  table 1:\n"); i >= 0 {
			rest := out[i+1:]
			if j := strings.Index(rest, "\n  table 2:"); j >= 0 {
				rest = rest[:j]
			}
			desc = append(desc, rest)
		}
	}
	addDel := func(from, to int, cmd string) {
		for i := from; i <= to; i++ {
			if cmd == "add-flow" {
				ofctl("add-flow", "br0", "table=1,in_port="+itoa(i)+",actions=2")
			} else {
				ofctl("del-flows", "br0", "table=1,in_port="+itoa(i))
			}
		}
	}
	ofctl("mod-table", "br0", "1", "vacancy:20,80")
	table1()
	addDel(1, 10, "add-flow") // VACANCY_DOWN at 10 %
	table1()
	addDel(1, 10, "del-flows") // VACANCY_UP at 90 %
	ofctl("mod-table", "br0", "1", "novacancy")
	addDel(1, 3, "add-flow")
	ofctl("mod-table", "br0", "1", "vacancy:20,80") // 70 %: VACANCY_UP armed
	addDel(4, 10, "add-flow")
	addDel(1, 10, "del-flows") // VACANCY_UP at 90 %
	var flows strings.Builder
	for i := 1; i <= 10; i++ {
		flows.WriteString("table=1,in_port=" + itoa(i) + ",actions=2\n")
	}
	file := filepath.Join(t.TempDir(), "flows")
	if err := os.WriteFile(file, []byte(flows.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	ofctl("--bundle", "add-flows", "br0", file) // VACANCY_DOWN within the bundle
	table1()
	ofctl("del-flows", "br0", "table=1") // VACANCY_UP
	appctl("ofctl/barrier")
	time.Sleep(100 * time.Millisecond)
	return maskMonitor(mon.stop(t)) + "\n--- table 1:\n" + strings.Join(desc, "--\n")
}

// TestTableVacancyEventsLikeOpenVSwitch: OpenFlow 1.4's vacancy events
// (OFPT_TABLE_STATUS) go out at the same flows, with the same
// descriptions, as Open vSwitch's, and the table description reports the
// same vacancy.
func TestTableVacancyEventsLikeOpenVSwitch(t *testing.T) {
	want, got := monitorSessionsBothWays(t, func(env []string) string { return vacancySession(t, env) })
	if got != want {
		t.Errorf("vacancy events differ\n--- Open vSwitch:\n%s\n--- gvs:\n%s", want, got)
	}
	if strings.Count(got, "OFPT_TABLE_STATUS") < 4 || !strings.Contains(got, "reason=VACANCY_DOWN") || !strings.Contains(got, "reason=VACANCY_UP") {
		t.Errorf("expected vacancy events in both directions:\n%s", got)
	}
}
