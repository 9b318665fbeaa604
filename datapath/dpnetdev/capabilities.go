package dpnetdev

// Capabilities is what this datapath supports, under the keys and in the
// form Open vSwitch writes to Datapath.capabilities (its
// get_datapath_cap). Controllers read them to choose how to program the
// switch: OVN, for one, relies on ct_zero_snat for its SNAT zones. Only
// what gvs really does is "true"; Open vSwitch 3.1's userspace datapath
// reports true for every boolean but these, which gvs does not have yet:
//   - ct_eventmask: ct(eventmask=...) is not accepted (no conntrack events);
//   - lb_output_action: no bonds, so no lb_output;
//   - add_mpls: no L3 MPLS encapsulation action.
//
// max_mpls_depth is 1: the flow key holds one label stack entry (deeper
// labels are handled by recirculation in translation). max_vlan_headers
// is 1 as Open vSwitch's userspace datapath reports it: the key has room
// for two, but translation matches one (Open vSwitch's default
// vlan-limit). max_hash_alg is 1 (sym_l4).
func Capabilities() map[string]string {
	return map[string]string{
		"max_vlan_headers":     "1",
		"max_mpls_depth":       "1",
		"recirc":               "true",
		"ct_state":             "true",
		"ct_zone":              "true",
		"ct_mark":              "true",
		"ct_label":             "true",
		"ct_state_nat":         "true",
		"ct_orig_tuple":        "true",
		"ct_orig_tuple6":       "true",
		"nd_ext":               "true",
		"masked_set_action":    "true",
		"tnl_push_pop":         "true",
		"ufid":                 "true",
		"trunc":                "true",
		"clone":                "true",
		"sample_nesting":       "true",
		"ct_eventmask":         "false",
		"ct_clear":             "true",
		"max_hash_alg":         "1",
		"check_pkt_len":        "true",
		"ct_timeout":           "true",
		"explicit_drop_action": "true",
		"lb_output_action":     "false",
		"ct_zero_snat":         "true",
		"add_mpls":             "false",
		"ct_flush":             "true",
	}
}
