package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	vsw "github.com/gvs-project/gvs/tests/perf/internal/vswitch"
)

const (
	nsSwitch, nsGen, nsSink = "dpb-sw", "dpb-gen", "dpb-sink"
	ifGen, ifSink           = "g0", "s0" // in nsGen and nsSink
	portGenIf, portSinkIf   = "pg", "ps" // their peers, the switch's ports
	ipGen, ipSink           = "10.9.0.1", "10.9.0.2"
	metricsAddr             = "127.0.0.1:9464" // gvs-vswitchd's, inside nsSwitch
)

func sh(args ...string) error {
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// teardown deletes the namespaces and with them the veths.
func teardown() {
	for _, ns := range []string{nsSwitch, nsGen, nsSink} {
		exec.Command("ip", "netns", "del", ns).Run()
	}
}

func setupTopology(genCPU int, rps bool) error {
	teardown()
	for _, ns := range []string{nsSwitch, nsGen, nsSink} {
		if err := sh("ip", "netns", "add", ns); err != nil {
			return err
		}
		for _, k := range []string{"all", "default"} {
			if err := sh("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf."+k+".disable_ipv6=1"); err != nil {
				return err
			}
		}
	}
	steps := [][]string{
		{"ip", "-n", nsSwitch, "link", "add", portGenIf, "type", "veth", "peer", "name", ifGen, "netns", nsGen},
		{"ip", "-n", nsSwitch, "link", "add", portSinkIf, "type", "veth", "peer", "name", ifSink, "netns", nsSink},
		{"ip", "-n", nsSwitch, "link", "set", "lo", "up"},
		{"ip", "-n", nsSwitch, "link", "set", portGenIf, "up"},
		{"ip", "-n", nsSwitch, "link", "set", portSinkIf, "up"},
		{"ip", "-n", nsGen, "addr", "add", ipGen + "/24", "dev", ifGen},
		{"ip", "-n", nsSink, "addr", "add", ipSink + "/24", "dev", ifSink},
		{"ip", "-n", nsGen, "link", "set", ifGen, "up"},
		{"ip", "-n", nsSink, "link", "set", ifSink, "up"},
		{"ip", "-n", nsGen, "link", "set", "lo", "up"},
		{"ip", "-n", nsSink, "link", "set", "lo", "up"},
	}
	// No segmentation or checksum offloads: TCP runs in MTU-sized
	// frames with their checksums filled in through both switches (Open
	// vSwitch 3.1 without userspace-tso-enable takes neither large
	// frames nor partial checksums from system ports; its documentation
	// has users turn tx offload off on veths).
	for _, e := range [][2]string{{nsGen, ifGen}, {nsSink, ifSink}, {nsSwitch, portGenIf}, {nsSwitch, portSinkIf}} {
		steps = append(steps, []string{"ip", "netns", "exec", e[0], "ethtool", "-K", e[1], "tx", "off", "tso", "off", "gso", "off", "gro", "off"})
	}
	// The hosts' receive processing on the generator's core, so the
	// switch's core only forwards.
	mask := strconv.FormatInt(1<<genCPU, 16)
	for _, e := range [][2]string{{nsGen, ifGen}, {nsSink, ifSink}} {
		if rps {
			steps = append(steps, []string{"ip", "netns", "exec", e[0], "sh", "-c", "echo " + mask + " > /sys/class/net/" + e[1] + "/queues/rx-0/rps_cpus"})
		}
	}
	for _, s := range steps {
		if err := sh(s...); err != nil {
			return err
		}
	}
	return nil
}

// startSwitch starts gvs or Open vSwitch pinned to the switch core and
// configures br0 for job j through ovs-vsctl and ovs-ofctl only.
func startSwitch(o options, work, f string, j job) (*vsw.Switch, error) {
	cpu := strconv.Itoa(o.switchCPU)
	ovs := f == "ovs" || f == "ovs-afxdp"
	opts := vsw.Options{OVS: ovs, GVSBin: o.binary(f), Netns: nsSwitch, Work: work, CPUs: cpu, Name: f}
	if !ovs {
		opts.GVSArgs = []string{"--metrics-address=" + metricsAddr}
	}
	sw, err := vsw.Start(opts)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			sw.Stop()
		}
	}()
	portType := "system"
	if strings.HasSuffix(f, "-afxdp") {
		portType = "afxdp"
	}
	args := vsctlArgs(o.switchCPU, j.p, portType)
	if _, err := sw.Cmd(60*time.Second, append([]string{"ovs-vsctl"}, args...)...); err != nil {
		return nil, err
	}
	if err := vsw.WaitFile(filepath.Join(sw.Dir, "br0.mgmt"), 15*time.Second); err != nil {
		return nil, err
	}
	flows, err := flowText(o, j)
	if err != nil {
		return nil, err
	}
	file := filepath.Join(sw.Dir, "flows.txt")
	if err := os.WriteFile(file, []byte(flows), 0o644); err != nil {
		return nil, err
	}
	ofctl := []string{"ovs-ofctl"}
	if j.p.ofVersion != "" {
		ofctl = append(ofctl, "-O", j.p.ofVersion)
	}
	if _, err := sw.Cmd(60*time.Second, append(ofctl, "del-flows", "br0")...); err != nil {
		return nil, err
	}
	if _, err := sw.Cmd(120*time.Second, append(ofctl, "add-flows", "br0", file)...); err != nil {
		return nil, err
	}
	ok = true
	return sw, nil
}

// vsctlArgs configures the switch: the core budget, br0 on the netdev
// datapath with no flows of its own (fail_mode=secure), pg as port 1
// and ps as port 2, both of portType (system or afxdp).
func vsctlArgs(switchCPU int, p *pipeline, portType string) []string {
	args := []string{"--timeout=60", "--", "init",
		"--", "set", "Open_vSwitch", ".", fmt.Sprintf("other_config:pmd-cpu-mask=0x%x", 1<<switchCPU),
		"--", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=netdev", "fail_mode=secure"}
	args = append(args, p.bridge...)
	for i, port := range []string{portGenIf, portSinkIf} {
		args = append(args, "--", "add-port", "br0", port, "--", "set", "interface", port, "type="+portType,
			fmt.Sprintf("ofport_request=%d", i+1))
	}
	return append(args, p.vsctl...)
}

func flowText(o options, j job) (string, error) {
	if j.p.flowFile {
		b, err := os.ReadFile(o.ovnFlows)
		if err != nil {
			return "", fmt.Errorf("the OVN pipeline's flows (tests/perf/dpbench/gen-ovn-flows.sh writes them): %w", err)
		}
		return string(b), nil
	}
	return j.p.flows(j.n), nil
}

// stopCmd ends a process this program started: SIGTERM, then SIGKILL.
func stopCmd(c *exec.Cmd) {
	c.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { c.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		c.Process.Kill()
		<-done
	}
}
