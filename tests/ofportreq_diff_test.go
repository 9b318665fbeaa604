package tests

import "testing"

// TestOfportRequestsLikeOpenVSwitch is ofproto.at "ofport_request":
// interfaces that swap or rotate the numbers they ask for get them, and an
// interface left off its number (another one asked for it first) gets it
// once that one asks for another.
func TestOfportRequestsLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	vsctl := func(args ...string) ofStep { return ofStep{"ovs-vsctl", append([]string{"--timeout=20"}, args...)} }
	set := func(p1, p2, p3 string) ofStep {
		return vsctl("set", "Interface", "p1", "ofport_request="+p1, "--", "set", "Interface", "p2", "ofport_request="+p2,
			"--", "set", "Interface", "p3", "ofport_request="+p3)
	}
	get := vsctl("get", "Interface", "p1", "ofport", "--", "get", "Interface", "p2", "ofport", "--", "get", "Interface", "p3", "ofport")
	steps := func() []ofStep {
		return []ofStep{
			set("3", "1", "2"), get,
			set("2", "3", "1"), get,
			set("1", "3", "2"), get,
			// p1 and p2 both ask for 1: one of them gets it (which one is
			// hash order in Open vSwitch, so not printed); then p1 asks
			// for 2 and p2 must get 1.
			set("1", "1", "3"),
			set("2", "1", "3"), get,
			set("3", "3", "1"),
			set("3", "2", "1"), get,
		}
	}
	diffOneBridgeAgainstOpenVSwitch(t, steps)
}
