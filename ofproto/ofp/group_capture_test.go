package ofp_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// groupCapturesFile holds what Debian's ovs-ofctl sent to a real
// ovs-vswitchd (dummy datapath) for the group and meter commands in each
// OpenFlow version, and what the switch replied. Replies carry durations,
// so the file is rewritten only with -update (go test -run TestRecordGroupCaptures . -args -update).
const groupCapturesFile = "testdata/group_captures.txt"

// groupSessions returns the ovs-ofctl runs, per version, in order: the
// group table and meter table are left empty after each version's runs.
func groupSessions() []asyncSession {
	var out []asyncSession
	add := func(v, name string, args ...string) {
		out = append(out, asyncSession{name: "of" + v + "_" + name, args: append([]string{"-O", "OpenFlow" + v}, args...)})
	}
	for _, v := range []string{"10", "11", "13", "15"} {
		sel := "group_id=2,type=select,bucket=weight:10,actions=output:1,bucket=weight:20,actions=output:2"
		if v == "15" || v == "10" {
			sel = "group_id=2,type=select,selection_method=dp_hash,bucket=weight:10,actions=output:1,bucket=weight:20,actions=output:2"
		}
		add(v, "add_group_all", "add-group", "SOCK", "group_id=1,type=all,bucket=output:1,bucket=output:2")
		add(v, "add_group_select", "add-group", "SOCK", sel)
		add(v, "add_group_indirect", "add-group", "SOCK", "group_id=3,type=indirect,bucket=actions=set_field:00:00:00:00:00:09->eth_dst,output:2")
		add(v, "add_group_ff", "add-group", "SOCK", "group_id=4,type=ff,bucket=watch_port:1,actions=output:1,bucket=watch_port:2,watch_group:3,actions=output:2")
		if v == "15" || v == "10" {
			add(v, "add_group_hash", "add-group", "SOCK",
				"group_id=5,type=select,selection_method=hash,fields(eth_dst,ip_dst=255.255.0.0,tcp_dst),selection_method_param=7,bucket=bucket_id:3,weight:5,actions=output:1,bucket=bucket_id:9,actions=output:2")
		}
		add(v, "mod_group", "mod-group", "SOCK", "group_id=1,type=all,bucket=output:2,bucket=output:1,bucket=output:LOCAL")
		add(v, "insert_buckets", "insert-buckets", "SOCK", "group_id=1,command_bucket_id=first,bucket=bucket_id:7,actions=output:1")
		add(v, "remove_buckets", "remove-buckets", "SOCK", "group_id=1,command_bucket_id=7")
		add(v, "dump_groups", "dump-groups", "SOCK")
		add(v, "dump_group_1", "dump-groups", "SOCK", "1")
		add(v, "dump_group_stats", "dump-group-stats", "SOCK")
		add(v, "dump_group_stats_1", "dump-group-stats", "SOCK", "group_id=1")
		add(v, "dump_group_features", "dump-group-features", "SOCK")
		add(v, "del_group_3", "del-groups", "SOCK", "group_id=3")
		add(v, "del_groups", "del-groups", "SOCK")
		add(v, "add_meter", "add-meter", "SOCK", "meter=1,kbps,burst,stats,bands=type=drop,rate=1000,burst_size=100")
		add(v, "add_meter_pktps", "add-meter", "SOCK", "meter=2,pktps,bands=type=drop,rate=500")
		add(v, "mod_meter", "mod-meter", "SOCK", "meter=1,kbps,stats,bands=type=drop,rate=2000")
		add(v, "dump_meters", "dump-meters", "SOCK")
		add(v, "dump_meter_1", "dump-meters", "SOCK", "meter=1")
		add(v, "meter_stats", "meter-stats", "SOCK")
		add(v, "meter_stats_2", "meter-stats", "SOCK", "meter=2")
		add(v, "meter_features", "meter-features", "SOCK")
		add(v, "del_meter_2", "del-meters", "SOCK", "meter=2")
		add(v, "del_meters", "del-meters", "SOCK")
	}
	// Group features in the versions not covered above.
	for _, v := range []string{"12", "14"} {
		add(v, "dump_group_features", "dump-group-features", "SOCK")
	}
	return out
}

// meterTraffic sends packets from p1 through meter 1, so that its
// counters are not zero.
func meterTraffic(e *ovsEnv) {
	e.ofctl("-O", "OpenFlow13", "add-flow", "SOCK", "table=0,priority=10,in_port=1,actions=meter:1,output:2")
	for i := 0; i < 2; i++ {
		e.receive("p1", asyncPacket)
	}
	e.ofctl("-O", "OpenFlow13", "del-flows", "SOCK", "in_port=1")
}

func recordGroups(t *testing.T, ofctl string) string {
	e := startOVSForeground(t)
	psock := e.path("proxy.sock")
	l, err := net.Listen("unix", psock)
	if err != nil {
		t.Fatal(err)
	}
	p := &asyncProxy{l: l, target: e.mgmt}
	p.wg.Add(1)
	go p.run()
	defer func() { l.Close(); p.wg.Wait() }()

	var sb strings.Builder
	for _, s := range groupSessions() {
		if strings.HasSuffix(s.name, "_dump_groups") {
			// Groups 1 and 4 and meter 1 exist: count some packets.
			e.ofctl("-O", "OpenFlow13", "add-meter", "SOCK", "meter=9,pktps,stats,bands=type=drop,rate=1")
			e.ofctl("-O", "OpenFlow13", "add-flow", "SOCK", "table=0,priority=10,in_port=1,actions=meter:9,group:1")
			for i := 0; i < 2; i++ {
				e.receive("p1", asyncPacket)
			}
		}
		if strings.HasSuffix(s.name, "_meter_stats") && (strings.HasPrefix(s.name, "of13") || strings.HasPrefix(s.name, "of15")) {
			meterTraffic(e)
		}
		args := make([]string, len(s.args))
		for i, a := range s.args {
			if a == "SOCK" {
				a = "unix:" + psock
			}
			args[i] = a
		}
		ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
		cmd := exec.CommandContext(ctx, ofctl, append([]string{"--timeout=6"}, args...)...)
		cmd.Env, cmd.Dir = e.env, e.dir
		out, err := cmd.CombinedOutput()
		cancel()
		time.Sleep(100 * time.Millisecond) // let the proxy drain the closed connection
		status := ""
		if err != nil {
			status = fmt.Sprintf(" (fails: %s)", strings.TrimSpace(lastLine(string(out))))
		}
		if strings.HasSuffix(s.name, "_del_groups") {
			e.ofctl("-O", "OpenFlow13", "del-flows", "SOCK", "in_port=1")
			e.ofctl("-O", "OpenFlow13", "del-meters", "SOCK", "meter=9")
		}
		fmt.Fprintf(&sb, "# %s: ovs-ofctl %s%s\n", s.name, strings.Join(s.args, " "), status)
		for _, r := range p.take() {
			if isTableQuery(r.data) {
				continue // ovs-ofctl's table-name lookups: large, and not ours
			}
			dir := "<"
			if r.sent {
				dir = ">"
			}
			fmt.Fprintf(&sb, "%s %s\n", dir, hex.EncodeToString(r.data))
		}
	}
	return sb.String()
}

// isTableQuery reports whether msg is a table-features (OF1.3+) or
// table-stats (OF1.0–1.2) multipart request or reply.
func isTableQuery(msg []byte) bool {
	if isTableFeatures(msg) {
		return true
	}
	return len(msg) >= 10 && msg[0] <= 3 && msg[1] >= 16 && msg[1] <= 19 && msg[8] == 0 && msg[9] == 3
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func readGroupCaptures(t testing.TB) []captured { return readCaptureFile(t, groupCapturesFile) }

// TestRecordGroupCaptures rewrites testdata/group_captures.txt with
// -update; otherwise it does nothing, because
// the switch's replies carry durations.
func TestRecordGroupCaptures(t *testing.T) {
	if !*update {
		t.Skip("ofp: group and meter captures are recorded only with -update")
	}
	got := recordGroups(t, needOVSOfctl(t))
	if err := os.WriteFile(groupCapturesFile, []byte(got), 0o644); err != nil {
		t.Fatal(err)
	}
}
