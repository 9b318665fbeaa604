package backer

import (
	"strings"
	"testing"
)

func TestConfineControllerAllowsOnlyTheRunDirectorysForms(t *testing.T) {
	for _, c := range []struct {
		target string
		ok     bool
	}{
		{"punix:/run/ovs/br0.void", true},
		{"punix:/run//ovs/br0.controller", true}, // runs of "/" count as one
		{"punix:/run/ovs/br0.void/../x", false},
		{"punix:/run/ovs/other.sock", false},
		{"punix:/run/ovs/br0", false},
		{"punix:br0.void", false},
		{"unix:/run/ovs/ctl.sock", true},
		{"unix:/run/ovs/sub/ctl.sock", true}, // Open vSwitch checks the prefix only
		{"unix:/tmp/ctl.sock", false},
		{"unix:ctl.sock", true}, // no "/": not a path Open vSwitch checks
		{"tcp:127.0.0.1:6653", true},
		{"ptcp:6653", true},
	} {
		msg := confineController("/run/ovs", "br0", c.target)
		if (msg == "") != c.ok {
			t.Errorf("%s: error %q, want allowed %v", c.target, msg, c.ok)
		}
		if msg != "" && !strings.HasPrefix(msg, "bridge br0: Not ") {
			t.Errorf("%s: error %q is not Open vSwitch's", c.target, msg)
		}
	}
}
