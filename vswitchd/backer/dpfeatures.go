package backer

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/datapath/dpnetdev"
	"github.com/gvs-project/gvs/ofproto/router"
	"github.com/gvs-project/gvs/ofproto/xlate"
)

// The datapath features of Open vSwitch's dpif_backer_support, as
// dpif/show-dp-features prints them (what the datapath has, its "boot
// time" support) and dpif/set-dp-features lists and changes them (the
// "run time" support translation follows; a feature can only be
// lowered). Of the run-time changes gvs's translation follows
// tnl_push_pop, clone, sample_nesting and check_pkt_len; the others are
// recorded and shown.

// dpFeature is one feature: its name, the title the commands print and
// whether it is a count (size_t in Open vSwitch) rather than a bool.
type dpFeature struct {
	name, title string
	count       bool
}

// dpFeatures are the features in dpif/show-dp-features' order.
var dpFeatures = []dpFeature{
	{"masked_set_action", "Masked set action", false},
	{"tnl_push_pop", "Tunnel push pop", false},
	{"ufid", "Ufid", false},
	{"trunc", "Truncate action", false},
	{"clone", "Clone action", false},
	{"sample_nesting", "Sample nesting", true},
	{"ct_eventmask", "Conntrack eventmask", false},
	{"ct_clear", "Conntrack clear", false},
	{"max_hash_alg", "Max dp_hash algorithm", true},
	{"check_pkt_len", "Check pkt length action", false},
	{"ct_timeout", "Conntrack timeout policy", false},
	{"explicit_drop_action", "Explicit Drop action", false},
	{"lb_output_action", "Optimized Balance TCP mode", false},
	{"ct_zero_snat", "Conntrack all-zero IP SNAT", false},
	{"add_mpls", "MPLS Label add", false},
	{"max_vlan_headers", "Max VLAN headers", true},
	{"max_mpls_depth", "Max MPLS depth", true},
	{"recirc", "Recirc", false},
	{"ct_state", "CT state", false},
	{"ct_zone", "CT zone", false},
	{"ct_mark", "CT mark", false},
	{"ct_label", "CT label", false},
	{"ct_state_nat", "CT state NAT", false},
	{"ct_orig_tuple", "CT orig tuple", false},
	{"ct_orig_tuple6", "CT orig tuple for IPv6", false},
	{"nd_ext", "IPv6 ND Extension", false},
}

// dpFeatureListOrder is the order dpif/set-dp-features lists every
// feature in (Open vSwitch walks a hash table of them).
var dpFeatureListOrder = []string{
	"sample_nesting", "clone", "ufid", "lb_output_action", "nd_ext", "ct_orig_tuple",
	"tnl_push_pop", "ct_eventmask", "ct_state", "ct_zero_snat", "ct_clear",
	"max_vlan_headers", "recirc", "ct_label", "max_hash_alg", "add_mpls", "ct_state_nat",
	"ct_timeout", "explicit_drop_action", "ct_mark", "ct_orig_tuple6", "max_mpls_depth",
	"masked_set_action", "check_pkt_len", "ct_zone", "trunc",
}

// sampleNesting is the depth of nested sample actions the userspace
// datapath executes, as Open vSwitch's probe finds it.
const sampleNesting = 10

// dpSupport is one datapath's feature values by name: boot what the
// datapath has, run what translation uses. Guarded by the backer's mu.
type dpSupport struct {
	boot, run map[string]int
}

// newDPSupport reads the datapath's capabilities into feature values.
func newDPSupport() *dpSupport {
	caps := dpnetdev.Capabilities()
	s := &dpSupport{boot: map[string]int{}, run: map[string]int{}}
	for _, f := range dpFeatures {
		v := caps[f.name]
		n := 0
		switch {
		case f.name == "sample_nesting":
			if v == "true" {
				n = sampleNesting
			}
		case f.count:
			n, _ = strconv.Atoi(v)
		case v == "true":
			n = 1
		}
		s.boot[f.name], s.run[f.name] = n, n
	}
	return s
}

func (f dpFeature) value(n int) string {
	if f.count {
		return strconv.Itoa(n)
	}
	return strconv.FormatBool(n != 0)
}

func (s *dpSupport) line(f dpFeature) string {
	return fmt.Sprintf("%s (%s) : [run time]:%s, [boot time]:%s\n", f.name, f.title, f.value(s.run[f.name]), f.value(s.boot[f.name]))
}

// set is dpif_set_support: with no name every feature, with a name only
// that one, with a value the change (reported true when made).
func (s *dpSupport) set(name, value string, haveName, haveValue bool) (string, bool) {
	if !haveName {
		var b strings.Builder
		for _, n := range dpFeatureListOrder {
			b.WriteString(s.line(featureByName(n)))
		}
		return b.String(), false
	}
	f := featureByName(name)
	if f.name == "" {
		return "Unexpected support field", false
	}
	if !haveValue {
		return s.line(f), false
	}
	if !f.count {
		switch strings.ToLower(value) {
		case "true":
			if s.boot[name] == 0 {
				return "Can not enable features not supported by the datapth", false
			}
			s.run[name] = 1
			return "", true
		case "false":
			s.run[name] = 0
			return "", true
		}
		return "Boolean value expected", false
	}
	n, err := strconv.ParseInt(value, 10, 32)
	switch {
	case err != nil:
		return "Integer number expected", false
	case n < 0:
		return "Negative number not expected", false
	case int(n) > s.boot[name]:
		return "Can not set value beyond the datapath capability", false
	}
	s.run[name] = int(n)
	return "", true
}

// apply gives translation the run-time features it follows.
func (s *dpSupport) apply(rt *xlate.RecircTable) {
	rt.SetTnlPushPop(s.run["tnl_push_pop"] != 0)
	rt.SetClone(s.run["clone"] != 0)
	rt.SetCheckPktLen(s.run["check_pkt_len"] != 0)
	n := s.run["sample_nesting"]
	if n == 0 {
		n = -1 // lowered to none: not the zero value "not lowered"
	}
	rt.SetSampleNesting(n)
}

func featureByName(name string) dpFeature {
	for _, f := range dpFeatures {
		if f.name == name {
			return f
		}
	}
	return dpFeature{}
}

var errNoSuchBridge = errors.New("no such bridge")

// support returns the features of datapath type typ (s.mu held).
func (s *Backer) support(typ string) *dpSupport {
	if s.dpSupport == nil {
		s.dpSupport = map[string]*dpSupport{}
	}
	if s.dpSupport[typ] == nil {
		s.dpSupport[typ] = newDPSupport()
	}
	return s.dpSupport[typ]
}

// showDPFeatures is dpif/show-dp-features BRIDGE: the datapath's
// features as it has them.
func (s *Backer) showDPFeatures(_ context.Context, args []string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.bridges[args[len(args)-1]]
	if b == nil {
		return "", errNoSuchBridge
	}
	sup := s.support(b.dpTyp)
	var out strings.Builder
	for _, f := range dpFeatures {
		n := sup.boot[f.name]
		if f.count {
			fmt.Fprintf(&out, "%s: %d\n", f.title, n)
		} else if n != 0 {
			fmt.Fprintf(&out, "%s: Yes\n", f.title)
		} else {
			fmt.Fprintf(&out, "%s: No\n", f.title)
		}
	}
	return out.String(), nil
}

// setDPFeatures is dpif/set-dp-features BRIDGE [FEATURE [VALUE]]. A
// change applies to the bridge's datapath: translation follows it and
// the datapath's flows are flushed (udpif_flush).
func (s *Backer) setDPFeatures(_ context.Context, args []string) (string, error) {
	s.mu.Lock()
	b := s.bridges[args[0]]
	if b == nil {
		s.mu.Unlock()
		return "", errNoSuchBridge
	}
	var name, value string
	if len(args) > 1 {
		name = args[1]
	}
	if len(args) > 2 {
		value = args[2]
	}
	sup := s.support(b.dpTyp)
	out, changed := sup.set(name, value, len(args) > 1, len(args) > 2)
	if !changed {
		s.mu.Unlock()
		return out, nil
	}
	if rt := s.recircs[b.dpTyp]; rt != nil {
		sup.apply(rt)
	}
	dp := s.dps.get(b.dpTyp)
	s.mu.Unlock()
	dp.FlowFlush()
	return out, nil
}

// DPFeatureCommands are dpif/show-dp-features and dpif/set-dp-features.
func (s *Backer) DPFeatureCommands() []router.Command {
	return []router.Command{
		{Name: "dpif/show-dp-features", Usage: "bridge", MinArgs: 1, MaxArgs: 1, Run: s.showDPFeatures},
		{Name: "dpif/set-dp-features", Usage: "bridge", MinArgs: 1, MaxArgs: 3, Run: s.setDPFeatures},
	}
}
