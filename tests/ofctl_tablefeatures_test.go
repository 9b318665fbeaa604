package tests

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gvs-project/gvs/internal/nstest"
)

// ofRecorder is a proxy between an OpenFlow client and a switch socket
// that keeps every message in both directions.
type ofRecorder struct {
	mu   sync.Mutex
	msgs [][]byte // in arrival order, either direction
	// damage, if set, changes the first table features reply of each
	// connection before it is recorded and passed on.
	damage func(msg []byte)
}

// startOFRecorder listens on a new socket and forwards each connection
// to target (a unix socket path); it returns the "unix:" name to use.
func startOFRecorder(t *testing.T, target string) (*ofRecorder, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "proxy.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	r := &ofRecorder{}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("unix", target)
			if err != nil {
				c.Close()
				continue
			}
			go r.pipe(c, s, false)
			go r.pipe(s, c, true)
		}
	}()
	return r, "unix:" + path
}

func (r *ofRecorder) pipe(from, to net.Conn, fromSwitch bool) {
	defer from.Close()
	defer to.Close()
	br := bufio.NewReader(from)
	damaged := false
	for {
		hdr := make([]byte, 8)
		if _, err := io.ReadFull(br, hdr); err != nil {
			return
		}
		n := int(binary.BigEndian.Uint16(hdr[2:]))
		if n < 8 {
			return
		}
		msg := make([]byte, n)
		copy(msg, hdr)
		if _, err := io.ReadFull(br, msg[8:]); err != nil {
			return
		}
		r.mu.Lock()
		if fromSwitch && r.damage != nil && !damaged && msg[1] == 19 && len(msg) > 16+64 && binary.BigEndian.Uint16(msg[8:]) == 12 {
			r.damage(msg)
			damaged = true
		}
		r.msgs = append(r.msgs, msg)
		r.mu.Unlock()
		if _, err := to.Write(msg); err != nil {
			return
		}
	}
}

// tableFeaturesMsgs returns the recorded OFPMP_TABLE_FEATURES requests
// and replies and forgets everything recorded.
func (r *ofRecorder) tableFeaturesMsgs() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out [][]byte
	for _, m := range r.msgs {
		if m[0] >= 4 && (m[1] == 18 || m[1] == 19) && len(m) >= 16 && binary.BigEndian.Uint16(m[8:]) == 12 {
			out = append(out, m)
		}
	}
	r.msgs = nil
	return out
}

// firstTables cuts a table features reply down to its first n tables,
// with the "more" flag as given.
func firstTables(t *testing.T, msg []byte, n int, more bool) []byte {
	t.Helper()
	out := append([]byte(nil), msg[:16]...)
	body := msg[16:]
	for i := 0; i < n && len(body) >= 2; i++ {
		l := int(binary.BigEndian.Uint16(body))
		if l < 64 || l > len(body) {
			t.Fatalf("table entry of length %d", l)
		}
		out, body = append(out, body[:l]...), body[l:]
	}
	binary.BigEndian.PutUint16(out[2:], uint16(len(out)))
	flags := uint16(0)
	if more {
		flags = 1
	}
	binary.BigEndian.PutUint16(out[10:], flags)
	return out
}

// tableFeaturesVersions are the -O values the tests use.
var tableFeaturesVersions = []string{"OpenFlow13", "OpenFlow14", "OpenFlow15"}

// TestDumpTableFeaturesPrintsAsOVSOfctl runs dump-table-features with
// Debian's ovs-ofctl and with gvs-ofctl against Open vSwitch's
// ovs-vswitchd and against gvs-vswitchd (OpenFlow 1.0 through 1.5, the
// first being refused by both) and requires identical output, errors and
// exit status.
func TestDumpTableFeaturesPrintsAsOVSOfctl(t *testing.T) {
	for _, bin := range []string{"ovs-ofctl", "ovs-vsctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	gvsOfctl := gvsOfctlBinary(t)
	for _, sw := range []string{"Open vSwitch", "gvs-vswitchd"} {
		t.Run(sw, func(t *testing.T) {
			env := ofctlSwitch(t, sw)
			dir := t.TempDir()
			steps := []onlineStep{oc("dump-table-features", "br0"), oc("-O", "OpenFlow10", "dump-table-features", "br0")}
			for _, v := range tableFeaturesVersions {
				steps = append(steps, oc("-O", v, "dump-table-features", "br0"), oc("-O", "OpenFlow10,"+v, "dump-table-features", "br1"))
			}
			for _, st := range steps {
				want := runOnline(t, env, dir, "ovs-ofctl", st)
				got := runOnline(t, env, dir, gvsOfctl, st)
				if got != want {
					t.Errorf("%v differs\n--- ovs-ofctl:\n%s--- gvs-ofctl:\n%s", st.args, want, got)
				}
			}
		})
	}
}

// TestOfpPrintTableFeaturesAsOVSOfctl records the table features
// requests and replies ovs-ofctl exchanges with Open vSwitch and with
// gvs-vswitchd and requires gvs-ofctl's ofp-parse (whole replies, too
// long for a command line) and ofp-print (requests, replies cut to a few
// tables, at verbosities 1 and 5, and damaged replies) to print what
// ovs-ofctl's do.
func TestOfpPrintTableFeaturesAsOVSOfctl(t *testing.T) {
	for _, bin := range []string{"ovs-ofctl", "ovs-vsctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	gvsOfctl := gvsOfctlBinary(t)
	for _, sw := range []string{"Open vSwitch", "gvs-vswitchd"} {
		t.Run(sw, func(t *testing.T) {
			env := ofctlSwitch(t, sw)
			var rundir string
			for _, kv := range env {
				if v, ok := strings.CutPrefix(kv, "OVS_RUNDIR="); ok {
					rundir = v
				}
			}
			rec, proxy := startOFRecorder(t, filepath.Join(rundir, "br0.mgmt"))
			dir := t.TempDir()
			compare := func(st onlineStep) {
				t.Helper()
				want := runOnline(t, env, dir, "ovs-ofctl", st)
				got := runOnline(t, env, dir, gvsOfctl, st)
				if got != want {
					t.Errorf("%.200v differs\n--- ovs-ofctl:\n%s--- gvs-ofctl:\n%s", st.args, want, got)
				}
			}
			for _, v := range tableFeaturesVersions {
				run(t, env, "ovs-ofctl", "--timeout=10", "-O", v, "dump-table-features", proxy)
				msgs := rec.tableFeaturesMsgs()
				if len(msgs) < 2 {
					t.Fatalf("%s: recorded %d table features messages", v, len(msgs))
				}
				file := filepath.Join(dir, "tf.bin")
				var all []byte
				for _, m := range msgs {
					all = append(all, m...)
				}
				if err := os.WriteFile(file, all, 0o644); err != nil {
					t.Fatal(err)
				}
				compare(oc("ofp-parse", file))
				req, reply := msgs[0], msgs[1]
				compare(oc("ofp-print", hex.EncodeToString(req)))
				compare(oc("ofp-print", hex.EncodeToString(req), "5"))
				for _, n := range []int{1, 2, 4} {
					compare(oc("ofp-print", hex.EncodeToString(firstTables(t, reply, n, n == 4))))
				}
				compare(oc("ofp-print", hex.EncodeToString(firstTables(t, reply, 2, false)), "5"))
				// The last table (no goto_table) after table 0.
				last := msgs[len(msgs)-1]
				two := firstTables(t, reply, 1, false)
				body := last[16:]
				for len(body) > 0 {
					l := int(binary.BigEndian.Uint16(body))
					if len(body) == l {
						two = append(two, body...)
						binary.BigEndian.PutUint16(two[2:], uint16(len(two)))
						break
					}
					body = body[l:]
				}
				compare(oc("ofp-print", hex.EncodeToString(two)))
				// Damaged: the table id 255, a doubled property, a
				// missing property, a property running past the entry.
				one := firstTables(t, reply, 1, false)
				bad := append([]byte(nil), one...)
				bad[16+2] = 255
				compare(oc("ofp-print", hex.EncodeToString(bad)))
				bad = append([]byte(nil), one...)
				binary.BigEndian.PutUint16(bad[16+64:], 2)
				compare(oc("ofp-print", hex.EncodeToString(bad)))
				bad = append([]byte(nil), one...)
				binary.BigEndian.PutUint16(bad[16+64:], 0x20)
				compare(oc("ofp-print", hex.EncodeToString(bad)))
				bad = append([]byte(nil), one...)
				binary.BigEndian.PutUint16(bad[16+66:], 0x4000)
				compare(oc("ofp-print", hex.EncodeToString(bad)))
				bad = append([]byte(nil), one...)
				binary.BigEndian.PutUint16(bad[16+66:], 3)
				compare(oc("ofp-print", hex.EncodeToString(bad)))
				bad = append([]byte(nil), one...)
				bad[16+3] = 9 // an OpenFlow 1.5 command that does not exist
				compare(oc("ofp-print", hex.EncodeToString(bad)))
			}
			// dump-table-features when the switch's reply is damaged:
			// a property too long in the second table of the first
			// reply, and the table id 255 in its first table.
			for _, damage := range []func(m []byte){
				func(m []byte) {
					off := 16 + int(binary.BigEndian.Uint16(m[16:]))
					binary.BigEndian.PutUint16(m[off+66:], 0x4000)
				},
				func(m []byte) { m[18] = 255 },
			} {
				rec.mu.Lock()
				rec.damage = damage
				rec.mu.Unlock()
				want := runOnline(t, env, dir, "ovs-ofctl", oc("-O", "OpenFlow13", "dump-table-features", proxy))
				got := runOnline(t, env, dir, gvsOfctl, oc("-O", "OpenFlow13", "dump-table-features", proxy))
				if got != want {
					t.Errorf("damaged reply: differs\n--- ovs-ofctl:\n%s--- gvs-ofctl:\n%s", want, got)
				}
			}
			rec.mu.Lock()
			rec.damage = nil
			rec.mu.Unlock()
		})
	}
}
