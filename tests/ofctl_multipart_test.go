package tests

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gvs-project/gvs/internal/nstest"
	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// mpPart is one message of a raw multipart session: sent as is.
type mpPart struct {
	xid uint32
	msg ofp.Message
}

// mpScenario is a raw OpenFlow session on br0.mgmt: the parts are sent in
// one go, then messages are read until a reply with xid until (or an
// error, for until 0) arrives.
type mpScenario struct {
	name    string
	version uint8
	parts   []mpPart
	until   uint32
}

func monitorAll(id uint32, table uint8) ofp.FlowMonitor {
	return ofp.FlowMonitor{ID: id, Command: ofp.FMCAdd, Flags: ofp.FMFInitial | ofp.FMFAdd | ofp.FMFRemoved | ofp.FMFModify | ofp.FMFInstructions,
		OutPort: ofp.PortAny16, OutGroup: ofp.GroupAny, TableID: table}
}

func multipartScenarios() []mpScenario {
	more := uint16(ofp.StatsReqMore)
	fmReq := func(flags uint16, ms ...ofp.FlowMonitor) *ofp.FlowMonitorRequest {
		return &ofp.FlowMonitorRequest{Flags: flags, Monitors: ms}
	}
	return []mpScenario{
		// Monitors split over parts: one initial reply for the whole.
		{"of14 flow monitor in three parts", mf.OF14, []mpPart{
			{20, fmReq(more, monitorAll(1, 0))}, {20, fmReq(more, monitorAll(2, 1))}, {20, fmReq(0, monitorAll(3, 0xff))},
			{21, &ofp.BarrierRequest{}}}, 21},
		{"of13 onf flow monitor in two parts", mf.OF13, []mpPart{
			{30, fmReq(more, monitorAll(1, 1))}, {30, fmReq(0, monitorAll(2, 0))}, {31, &ofp.BarrierRequest{}}}, 31},
		// A part with another xid in between is handled on its own.
		{"of15 interleaved barrier", mf.OF15, []mpPart{
			{40, fmReq(more, monitorAll(1, 0))}, {41, &ofp.BarrierRequest{}}, {40, fmReq(0, monitorAll(2, 1))},
			{42, &ofp.BarrierRequest{}}}, 42},
		// (The same monitor id twice in one assembled request is left out:
		// Open vSwitch 3.1 answers OFPMOFC_MONITOR_EXISTS in an OpenFlow 1.0
		// header with xid 0 and 4 bytes of data, gvs in the request's.)
		// Parts of different types: OFPBRC_BAD_STAT.
		{"of14 parts of different types", mf.OF14, []mpPart{
			{60, fmReq(more, monitorAll(1, 0))}, {60, &ofp.TableFeaturesRequest{}}, {61, &ofp.BarrierRequest{}}}, 61},
		// No last part: OFPBRC_MULTIPART_REQUEST_TIMEOUT after a second.
		{"of15 missing last part", mf.OF15, []mpPart{{70, fmReq(more, monitorAll(1, 0))}}, 0},
		{"of13 missing last part", mf.OF13, []mpPart{{80, fmReq(more, monitorAll(1, 0))}}, 0},
	}
}

// runMultipartScenario runs sc on a fresh connection to br0 and returns
// what ovs-ofctl ofp-print prints for each message the switch sent.
func runMultipartScenario(t *testing.T, env []string, sc mpScenario) string {
	t.Helper()
	var rundir string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "OVS_RUNDIR="); ok {
			rundir = v
		}
	}
	nc, err := net.Dial("unix", filepath.Join(rundir, "br0.mgmt"))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	read := func() []byte {
		hdr := make([]byte, 8)
		if _, err := io.ReadFull(nc, hdr); err != nil {
			t.Fatalf("%s: %v", sc.name, err)
		}
		b := make([]byte, binary.BigEndian.Uint16(hdr[2:]))
		copy(b, hdr)
		if _, err := io.ReadFull(nc, b[8:]); err != nil {
			t.Fatalf("%s: %v", sc.name, err)
		}
		return b
	}
	send := func(xid uint32, m ofp.Message) {
		b, err := ofp.Encode(nil, sc.version, xid, m)
		if err != nil {
			t.Fatalf("%s: %v", sc.name, err)
		}
		if _, err := nc.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	send(1, &ofp.Hello{})
	read() // the switch's hello
	for _, p := range sc.parts {
		send(p.xid, p.msg)
	}
	var out strings.Builder
	for {
		b := read()
		text, _ := exec.Command("ovs-ofctl", "ofp-print", hex.EncodeToString(b)).CombinedOutput()
		out.Write(text)
		xid := binary.BigEndian.Uint32(b[4:])
		if sc.until != 0 && xid == sc.until || sc.until == 0 && b[1] == 1 { // reply, or OFPT_ERROR
			return out.String()
		}
	}
}

// TestMultipartRequestsInPartsAnswerAsOpenVSwitch sends flow monitor
// requests split over OFPSF_REQ_MORE parts (and parts that never finish
// or mix types) to Open vSwitch's ovs-vswitchd and to gvs-vswitchd, each
// with the same flows, and requires the same replies, printed by
// ovs-ofctl ofp-print.
func TestMultipartRequestsInPartsAnswerAsOpenVSwitch(t *testing.T) {
	t.Parallel()
	for _, bin := range []string{"ovs-ofctl", "ovs-vsctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	flows := func(env []string) {
		run(t, env, "ovs-ofctl", "add-flow", "br0", "priority=5,ip,actions=output:2")
		run(t, env, "ovs-ofctl", "add-flow", "br0", "table=1,cookie=0x3,in_port=1,actions=drop")
	}
	session := func(env []string) []string {
		var out []string
		for _, sc := range multipartScenarios() {
			out = append(out, fmt.Sprintf("# %s\n%s", sc.name, runMultipartScenario(t, env, sc)))
		}
		return out
	}
	ovsEnv, stopOVS := startOpenVSwitch(t)
	setUpOfctlBridge(t, ovsEnv)
	flows(ovsEnv)
	want := session(ovsEnv)
	stopOVS()
	_, gvsEnv := startDaemon(t)
	setUpOfctlBridge(t, gvsEnv)
	flows(gvsEnv)
	got := session(gvsEnv)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("differs\n--- Open vSwitch:\n%s\n--- gvs:\n%s", want[i], got[i])
		}
	}
}
