package main

import (
	"fmt"
	"os/exec"
	"strings"
)

// The topology. Every interface lives in a namespace this program makes,
// so no frame touches the root namespace and the switches' own tap
// devices (the bridges' internal ports, Open vSwitch's ovs-netdev) cannot
// collide with other switches running on the machine:
//
//	gvsmb-ga: g0 ── ga ┐                      ┌ gb ── g0 :gvsmb-gb
//	                   bridge A ─ pa ══ pb ─ bridge B
//	gvsmb-fa: f0 ── fa ┘                      └ fb ── f0 :gvsmb-fb
//
// ga, pa, fa, pb, gb and fb are in gvsmb-sw, where the switch runs.
const (
	nsSwitch = "gvsmb-sw"
	nsGA     = "gvsmb-ga"
	nsGB     = "gvsmb-gb"
	nsFA     = "gvsmb-fa"
	nsFB     = "gvsmb-fb"
	brA      = "mbA"
	brB      = "mbB"
	guestIf  = "g0"
	floodIf  = "f0"
)

// bridgePorts are each bridge's ports in OpenFlow port order.
var bridgePorts = map[string][]string{
	brA: {"ga", "pa", "fa"},
	brB: {"pb", "gb", "fb"},
}

func allNamespaces() []string { return []string{nsGA, nsGB, nsFA, nsFB, nsSwitch} }

func sh(args ...string) error {
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// teardown deletes the namespaces (and with them every veth); the
// switches must have exited first.
func teardown() {
	for _, ns := range allNamespaces() {
		exec.Command("ip", "netns", "del", ns).Run()
	}
}

func setupTopology() error {
	teardown()
	for _, ns := range allNamespaces() {
		if err := sh("ip", "netns", "add", ns); err != nil {
			return err
		}
		// No IPv6 anywhere, so no stack sends router solicitations or
		// MLD reports that a bridge would flood into the counters.
		for _, k := range []string{"all", "default"} {
			if err := sh("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf."+k+".disable_ipv6=1"); err != nil {
				return err
			}
		}
	}
	steps := [][]string{
		{"ip", "-n", nsSwitch, "link", "add", "ga", "type", "veth", "peer", "name", guestIf, "netns", nsGA},
		{"ip", "-n", nsSwitch, "link", "add", "gb", "type", "veth", "peer", "name", guestIf, "netns", nsGB},
		{"ip", "-n", nsSwitch, "link", "add", "fa", "type", "veth", "peer", "name", floodIf, "netns", nsFA},
		{"ip", "-n", nsSwitch, "link", "add", "fb", "type", "veth", "peer", "name", floodIf, "netns", nsFB},
		{"ip", "-n", nsSwitch, "link", "add", "pa", "type", "veth", "peer", "name", "pb"},
		{"ip", "-n", nsGA, "link", "set", guestIf, "up"},
		{"ip", "-n", nsGB, "link", "set", guestIf, "up"},
		{"ip", "-n", nsFA, "link", "set", floodIf, "up"},
		{"ip", "-n", nsFB, "link", "set", floodIf, "up"},
		{"ip", "-n", nsSwitch, "link", "set", "lo", "up"},
	}
	for _, p := range []string{"ga", "pa", "fa", "pb", "gb", "fb"} {
		steps = append(steps, []string{"ip", "-n", nsSwitch, "link", "set", p, "up"})
	}
	for _, s := range steps {
		if err := sh(s...); err != nil {
			return err
		}
	}
	return nil
}
