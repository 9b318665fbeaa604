// Package ovlrig is the overload rig of the storm and soak harnesses
// (tests/perf/storm, tests/perf/soak): gvs-vswitchd in-process with
// bridge br0 on the dummy datapath, established flows p1→p2 (VLAN 20,
// one megaflow each, through ct(commit,zone=8)) and a storm rule p3→p4
// (VLAN 10, ct(commit,zone=7) and NORMAL, reading the source address and
// port so that every storm packet is a megaflow of its own). It is the
// set-up of tests/overload_test.go, for programs. It needs Open vSwitch's
// ovs-vsctl, ovs-ofctl and ovs-appctl.
package ovlrig

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/gvs-project/gvs/cmd/vswitchd"
	"github.com/gvs-project/gvs/datapath/dpnetdev"
	"github.com/gvs-project/gvs/datapath/netdev/dummy"
)

// Options shape the rig.
type Options struct {
	Established int           // established flows (at most 256)
	FlowLimit   int           // the datapath's flow limit (other_config:flow-limit); 0: Open vSwitch's default
	MaxIdle     time.Duration // other_config:max-idle
	ZoneLimit   int           // conntrack limit of the storm's zone 7; 0: none
	MACTable    int           // other_config:mac-table-size
	Workers     int           // poll-mode workers; 0: the daemon's default
}

// Rig is a running switch.
type Rig struct {
	Opts           Options
	Dir            string
	D              *vswitchd.Daemon
	DP             *dpnetdev.Datapath
	P1, P2, P3, P4 *dummy.Device
	env            []string
}

// Start starts gvs-vswitchd and configures br0.
func Start(o Options) (*Rig, error) {
	if o.Established <= 0 || o.Established > 256 {
		return nil, errors.New("ovlrig: 1..256 established flows")
	}
	dir, err := os.MkdirTemp("", "ovlrig-")
	if err != nil {
		return nil, err
	}
	cfg := &vswitchd.Config{
		Program: "gvs-vswitchd", RunDir: dir, DBDir: dir, LogDir: dir,
		DBFile: filepath.Join(dir, "conf.db"), Pidfile: filepath.Join(dir, "gvs-vswitchd.pid"),
		LogFile: filepath.Join(dir, "gvs-vswitchd.log"), Workers: o.Workers,
	}
	d, err := vswitchd.Start(cfg)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	r := &Rig{Opts: o, Dir: dir, D: d, env: append(os.Environ(), "OVS_RUNDIR="+dir, "OVS_DBDIR="+dir, "OVS_LOGDIR="+dir)}
	if err := r.configure(); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

func (r *Rig) configure() error {
	o := r.Opts
	if _, err := r.Cmd("ovs-vsctl", "--timeout=20", "init"); err != nil {
		return err
	}
	args := []string{"--timeout=20", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy", "fail_mode=secure"}
	if o.MACTable > 0 {
		args = append(args, fmt.Sprintf("other_config:mac-table-size=%d", o.MACTable))
	}
	for i, tag := range []string{"20", "20", "10", "10"} {
		p := fmt.Sprintf("p%d", i+1)
		args = append(args, "--", "add-port", "br0", p, "tag="+tag, "--", "set", "interface", p, "type=dummy", fmt.Sprintf("ofport_request=%d", i+1))
	}
	if _, err := r.Cmd("ovs-vsctl", args...); err != nil {
		return err
	}
	r.DP = r.D.Datapath("dummy")
	for i, p := range []**dummy.Device{&r.P1, &r.P2, &r.P3, &r.P4} {
		pi, ok := r.DP.PortByName(fmt.Sprintf("p%d", i+1))
		if !ok {
			return fmt.Errorf("ovlrig: no datapath port p%d", i+1)
		}
		*p = pi.Device.(*dummy.Device)
	}
	var flows strings.Builder
	for i := 0; i < o.Established; i++ {
		fmt.Fprintf(&flows, "priority=100,udp,in_port=1,nw_dst=10.1.0.%d,actions=ct(commit,zone=8),output:2\n", i)
	}
	flows.WriteString("priority=10,udp,in_port=3,actions=move:NXM_OF_IP_SRC[]->NXM_NX_REG0[],move:NXM_OF_UDP_SRC[]->NXM_NX_REG1[0..15],ct(commit,zone=7),NORMAL\n")
	file := filepath.Join(r.Dir, "flows.txt")
	if err := os.WriteFile(file, []byte(flows.String()), 0o644); err != nil {
		return err
	}
	if _, err := r.Cmd("ovs-ofctl", "add-flows", "br0", file); err != nil {
		return err
	}
	if o.ZoneLimit > 0 {
		if _, err := r.Appctl("dpctl/ct-set-limits", fmt.Sprintf("zone=7,limit=%d", o.ZoneLimit)); err != nil {
			return err
		}
	}
	if o.FlowLimit > 0 {
		r.DP.SetFlowLimit(o.FlowLimit)
	}
	if o.MaxIdle > 0 {
		if _, err := r.Cmd("ovs-vsctl", "--timeout=20", "set", "Open_vSwitch", ".",
			fmt.Sprintf("other_config:max-idle=%d", o.MaxIdle.Milliseconds())); err != nil {
			return err
		}
	}
	_, err := r.Appctl("revalidator/wait")
	return err
}

// Cmd runs one of Open vSwitch's tools against the rig.
func (r *Rig) Cmd(bin string, args ...string) (string, error) {
	c := exec.Command(bin, args...)
	c.Env = r.env
	out, err := c.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w: %s", bin, strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// Appctl runs ovs-appctl against the daemon.
func (r *Rig) Appctl(args ...string) (string, error) {
	return r.Cmd("ovs-appctl", append([]string{"-t", "gvs-vswitchd"}, args...)...)
}

// Close stops the daemon and removes its directory.
func (r *Rig) Close() {
	r.D.Close()
	os.RemoveAll(r.Dir)
}

// EstablishedFrame is the frame of established flow i.
func EstablishedFrame(i int) []byte {
	return UDPFrame(nil, [6]byte{0x50, 0x54, 0, 0, 1, 1}, [6]byte{0x50, 0x54, 0, 0, 2, 2},
		[4]byte{10, 0, 0, 1}, [4]byte{10, 1, 0, byte(i)}, 1000, 2000)
}

// StormFrame builds into buf a frame with random unicast MACs and 5-tuple.
func StormFrame(buf []byte, rng *rand.Rand) []byte {
	var src, dst [6]byte
	a, b := rng.Uint64(), rng.Uint64()
	for i := 0; i < 6; i++ {
		src[i], dst[i] = byte(a>>(8*i)), byte(b>>(8*i))
	}
	src[0], dst[0] = 0x02, 0x02 // locally administered unicast
	x := rng.Uint64()
	return UDPFrame(buf, src, dst, [4]byte{10, 2, byte(x), byte(x >> 8)}, [4]byte{10, 3, byte(x >> 16), byte(x >> 24)},
		uint16(x>>32), uint16(x>>48))
}

// UDPFrame builds an Ethernet/IPv4/UDP frame (IP checksum set, UDP
// checksum 0) into buf.
func UDPFrame(buf []byte, src, dst [6]byte, sip, dip [4]byte, sport, dport uint16) []byte {
	f := append(buf[:0], dst[:]...)
	f = append(f, src[:]...)
	f = append(f, 0x08, 0x00)
	ip := len(f)
	f = append(f, 0x45, 0, 0, 28+18, 0, 0, 0x40, 0, 64, 17, 0, 0)
	f = append(f, sip[:]...)
	f = append(f, dip[:]...)
	var sum uint32
	for i := ip; i < ip+20; i += 2 {
		sum += uint32(f[i])<<8 | uint32(f[i+1])
	}
	for sum > 0xffff {
		sum = sum>>16 + sum&0xffff
	}
	binary.BigEndian.PutUint16(f[ip+10:], ^uint16(sum))
	f = binary.BigEndian.AppendUint16(f, sport)
	f = binary.BigEndian.AppendUint16(f, dport)
	f = append(f, 0, 8+18, 0, 0)
	return append(f, make([]byte, 18)...)
}

// Window injects frames on in keeping at most Size in flight (injected
// but not yet transmitted on out), so that in's receive queue never
// overflows.
type Window struct {
	In, Out *dummy.Device
	Size    uint64
	Sent    uint64
	base    uint64
}

// NewWindow starts counting from out's current transmit counter.
func NewWindow(in, out *dummy.Device, size uint64) *Window {
	return &Window{In: in, Out: out, Size: size, base: out.Stats().TxPackets}
}

// Delivered is the frames transmitted on Out since the window started.
func (w *Window) Delivered() uint64 { return w.Out.Stats().TxPackets - w.base }

// Inject waits for room in the window (up to timeout) and injects frame.
func (w *Window) Inject(frame []byte, timeout time.Duration) error {
	deadline := time.Time{}
	for w.Sent-w.Delivered() >= w.Size {
		if deadline.IsZero() {
			deadline = time.Now().Add(timeout)
		} else if time.Now().After(deadline) {
			return fmt.Errorf("%s: %d frames in flight for %v", w.In.Name(), w.Sent-w.Delivered(), timeout)
		}
		time.Sleep(10 * time.Microsecond)
	}
	if !w.In.Inject(frame) {
		return fmt.Errorf("%s: receive queue full with a window of %d", w.In.Name(), w.Size)
	}
	w.Sent++
	return nil
}
