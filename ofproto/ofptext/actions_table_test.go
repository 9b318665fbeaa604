package ofptext

import (
	"testing"

	"github.com/gvs-project/gvs/ofproto/ofp"
)

// TestEveryActionKindHasAFormatter: each kind is registered by a family
// file with its ovs-ofctl text, so no decoded action prints as "<RAW>"
// but the ones Open vSwitch keeps raw.
func TestEveryActionKindHasAFormatter(t *testing.T) {
	for k := ofp.ActionType(0); k < ofp.NumActionTypes; k++ {
		if actionFormatters[k] == nil {
			t.Errorf("%s: no formatter registered", k)
		}
	}
}

// TestEveryParsedActionNameFormatsBack: each registered action name,
// given a valid argument, parses into actions that print back in
// ovs-ofctl's syntax (exactly, before any version's normalisation), and
// no registered name is left out of the list.
func TestEveryParsedActionNameFormatsBack(t *testing.T) {
	cases := []struct{ name, arg, want string }{
		{"output", "1", "output:1"},
		{"controller", "", "CONTROLLER:65535"},
		{"enqueue", "1:2", "enqueue:1:2"},
		{"set_queue", "1", "set_queue:1"},
		{"pop_queue", "", "pop_queue"},
		{"group", "1", "group:1"},
		{"set_field", "1->reg0", "set_field:0x1->reg0"},
		{"load", "1->NXM_NX_REG0[]", "load:0x1->NXM_NX_REG0[]"},
		{"move", "NXM_NX_REG0[]->NXM_NX_REG1[]", "move:NXM_NX_REG0[]->NXM_NX_REG1[]"},
		{"delete_field", "tun_metadata0", "delete_field:tun_metadata0"},
		{"mod_dl_src", "00:00:00:00:00:01", "mod_dl_src:00:00:00:00:00:01"},
		{"mod_dl_dst", "00:00:00:00:00:01", "mod_dl_dst:00:00:00:00:00:01"},
		{"mod_nw_src", "10.0.0.1", "mod_nw_src:10.0.0.1"},
		{"mod_nw_dst", "10.0.0.1", "mod_nw_dst:10.0.0.1"},
		{"mod_nw_tos", "4", "mod_nw_tos:4"},
		{"mod_nw_ecn", "1", "mod_nw_ecn:1"},
		{"mod_nw_ttl", "9", "mod_nw_ttl:9"},
		{"set_nw_ttl", "9", "mod_nw_ttl:9"},
		{"mod_tp_src", "1", "mod_tp_src:1"},
		{"mod_tp_dst", "1", "mod_tp_dst:1"},
		{"set_tunnel", "1", "set_tunnel:0x1"},
		{"set_tunnel64", "1", "set_tunnel64:0x1"},
		{"dec_ttl", "", "dec_ttl"},
		{"push_vlan", "0x8100", "push_vlan:0x8100"},
		{"strip_vlan", "", "strip_vlan"},
		{"pop_vlan", "", "pop_vlan"},
		{"mod_vlan_vid", "1", "mod_vlan_vid:1"},
		{"set_vlan_vid", "1", "mod_vlan_vid:1"},
		{"mod_vlan_pcp", "1", "mod_vlan_pcp:1"},
		{"set_vlan_pcp", "1", "mod_vlan_pcp:1"},
		{"push_mpls", "0x8847", "push_mpls:0x8847"},
		{"pop_mpls", "0x0800", "pop_mpls:0x0800"},
		{"set_mpls_label", "1", "set_mpls_label(1)"},
		{"set_mpls_tc", "1", "set_mpls_tc(1)"},
		{"set_mpls_ttl", "1", "set_mpls_ttl(1)"},
		{"dec_mpls_ttl", "", "dec_mpls_ttl"},
		{"dec_nsh_ttl", "", "dec_nsh_ttl"},
		{"encap", "ethernet", "encap(ethernet)"},
		{"decap", "", "decap()"},
		{"ct", "commit", "ct(commit)"},
		{"ct_clear", "", "ct_clear"},
		{"learn", "table=1", "learn(table=1)"},
		{"fin_timeout", "idle_timeout=1", "fin_timeout(idle_timeout=1)"},
		{"bundle", "eth_src,0,hrw,ofport,members:1", "bundle(eth_src,0,hrw,ofport,members:1)"},
		{"bundle_load", "eth_src,0,hrw,ofport,NXM_NX_REG0[],members:1", "bundle_load(eth_src,0,hrw,ofport,NXM_NX_REG0[],members:1)"},
		{"multipath", "eth_src,0,modulo_n,2,0,NXM_NX_REG0[0..1]", "multipath(eth_src,0,modulo_n,2,0,NXM_NX_REG0[0..1])"},
		{"push", "NXM_NX_REG0[]", "push:NXM_NX_REG0[]"},
		{"pop", "NXM_NX_REG0[]", "pop:NXM_NX_REG0[]"},
		{"resubmit", "1", "resubmit:1"},
		{"goto_table", "1", "goto_table:1"},
		{"write_metadata", "1", "write_metadata:0x1"},
		{"clear_actions", "", "clear_actions"},
		{"write_actions", "output:1", "write_actions(output:1)"},
		{"meter", "1", "meter:1"},
		{"exit", "", "exit"},
		{"note", "01", "note:01"},
		{"sample", "probability=1,collector_set_id=1,obs_domain_id=1,obs_point_id=1", "sample(probability=1,collector_set_id=1,obs_domain_id=1,obs_point_id=1)"},
		{"clone", "output:1", "clone(output:1)"},
		{"check_pkt_larger", "100)->NXM_NX_REG0[0]", "check_pkt_larger(100)->NXM_NX_REG0[0]"},
		{"conjunction", "1,1/2", "conjunction(1,1/2)"},
		{"debug_slow", "", "debug_slow"},
		{"debug_recirc", "", "debug_recirc"},
	}
	tested := map[string]bool{"apply_actions": true} // refused: the default instruction
	for _, c := range cases {
		tested[c.name] = true
		acts, err := parseAction(&actionText{name: c.name, origName: c.name, arg: c.arg, whole: c.name + "(" + c.arg + ")", v: 0x01})
		if err != nil {
			t.Errorf("%s(%s): %v", c.name, c.arg, err)
			continue
		}
		if got := FormatActions(acts, 0x04); got != c.want {
			t.Errorf("%s(%s) prints as %q, want %q", c.name, c.arg, got, c.want)
		}
	}
	for name := range actionParsers {
		if !tested[name] {
			t.Errorf("%s: registered but not tested here", name)
		}
	}
}
