package server

import (
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// vsctlScript runs a scripted ovs-vsctl session and returns its outputs
// with UUIDs replaced by their order of first appearance.
func vsctlScript(t *testing.T, sock string, script [][]string) []string {
	t.Helper()
	var outs []string
	for _, args := range script {
		full := append([]string{"--db=unix:" + sock, "--no-wait", "--timeout=10"}, args...)
		out, errOut, err := runErr("ovs-vsctl", full...)
		res := out + errOut
		if err != nil {
			res += "ERROR: " + err.Error()
		}
		if isRecordList(args) {
			// Row order follows random UUIDs in the client's hash table.
			recs := strings.Split(uuidRE.ReplaceAllString(res, "<uuid>"), "\n\n")
			for i := range recs {
				recs[i] = strings.Trim(recs[i], "\n")
			}
			sort.Strings(recs)
			res = strings.Join(recs, "\n\n")
		}
		outs = append(outs, res)
	}
	return normalizeUUIDs(outs)
}

func isRecordList(args []string) bool {
	for _, a := range args {
		if a == "list" || a == "find" {
			return true
		}
	}
	return false
}

func normalizeUUIDs(outs []string) []string {
	seen := map[string]string{}
	for i, o := range outs {
		outs[i] = uuidRE.ReplaceAllStringFunc(o, func(u string) string {
			if n, ok := seen[u]; ok {
				return n
			}
			n := "<uuid" + string(rune('A'+len(seen)%26)) + ">"
			if len(seen) >= 26 {
				n = "<uuid" + string(rune('A'+len(seen)/26-1)) + string(rune('A'+len(seen)%26)) + ">"
			}
			seen[u] = n
			return n
		})
	}
	return outs
}

var vsctlSession = [][]string{
	{"init"},
	{"add-br", "br0"},
	{"add-port", "br0", "p1", "--", "set", "Interface", "p1", "type=dummy", "ofport_request=5"},
	{"add-port", "br0", "p2"},
	{"--", "--id=@p", "get", "Port", "p2", "--", "--id=@m", "create", "Mirror", "name=m0", "select_src_port=@p",
		"--", "add", "Bridge", "br0", "mirrors", "@m"},
	{"--columns=name,select_src_port", "list", "Mirror"},
	{"set", "Bridge", "br0", "other_config:hwaddr=00:11:22:33:44:55", "fail_mode=secure"},
	{"get", "Bridge", "br0", "fail_mode", "other_config"},
	{"get", "Interface", "p1", "ofport_request", "type"},
	{"list-br"},
	{"list-ports", "br0"},
	{"--columns=name,type,ofport_request", "list", "Interface"},
	{"--columns=name", "find", "Interface", "type=dummy"},
	{"set-controller", "br0", "tcp:127.0.0.1:6653"},
	{"get-controller", "br0"},
	{"set-fail-mode", "br0", "standalone"},
	{"get-fail-mode", "br0"},
	{"add-br", "br0"},
	{"del-port", "br0", "p2"},
	{"list-ports", "br0"},
	{"--columns=name,select_src_port", "list", "Mirror"},
	{"add-br", "br1", "--", "set", "Bridge", "br1", "datapath_type=netdev"},
	{"br-exists", "br1"},
	{"del-br", "br0"},
	{"list-br"},
	{"--columns=name", "list", "Interface"},
	{"show"},
	{"set", "Interface", "br1", "ofport_request=0"},
	{"--", "--id=@q", "create", "QoS", "type=linux-htb", "--", "set", "Port", "br1", "qos=@q"},
	{"list", "QoS"},
	{"clear", "Port", "br1", "qos"},
	{"list", "QoS"},
	{"destroy", "Open_vSwitch", "."},
}

// TestOVSVsctlMatchesOVSDBServer runs the same ovs-vsctl session against
// gvs and against Debian's ovsdb-server and expects identical output.
func TestOVSVsctlMatchesOVSDBServer(t *testing.T) {
	requireBins(t, "ovs-vsctl", "ovsdb-server", "ovsdb-tool")
	dir := shortDir(t)
	_, gsock := startGVS(t, dir, filepath.Join(dir, "gvs.db"))
	osock := startOVS(t, dir)
	got := vsctlScript(t, gsock, vsctlSession)
	want := vsctlScript(t, osock, vsctlSession)
	for i := range vsctlSession {
		if got[i] != want[i] {
			t.Errorf("ovs-vsctl %v:\n gvs: %q\n ovs: %q", vsctlSession[i], got[i], want[i])
		}
	}
}
