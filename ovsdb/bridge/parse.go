package bridge

import (
	"sort"

	"github.com/gvs-project/gvs/ovsdb/client"
	"github.com/gvs-project/gvs/ovsdb/model"
)

// MonitoredTables are the tables and columns the bridge layer reads.
var MonitoredTables = []client.MonitorTable{
	{Table: "Open_vSwitch", Columns: []string{"bridges", "next_cfg", "cur_cfg", "datapaths", "other_config", "external_ids", "ovs_version", "datapath_types", "iface_types", "dpdk_version"}},
	{Table: "Bridge", Columns: []string{"name", "datapath_type", "fail_mode", "other_config", "external_ids", "ports", "controller", "protocols", "datapath_id", "datapath_version", "netflow", "sflow", "ipfix", "flow_tables", "mirrors", "mcast_snooping_enable", "stp_enable", "rstp_enable", "status", "rstp_status"}},
	{Table: "Port", Columns: []string{"name", "interfaces", "tag", "trunks", "vlan_mode",
		"bond_mode", "lacp", "bond_updelay", "bond_downdelay", "bond_active_slave", "other_config", "status", "statistics", "rstp_status", "rstp_statistics"}},
	{Table: "Interface", Columns: []string{"name", "type", "options", "ofport_request", "mtu_request", "external_ids", "ofport", "error", "ifindex", "mac_in_use", "mtu", "admin_state", "link_state", "link_resets", "link_speed", "duplex", "statistics", "status", "bfd", "bfd_status", "other_config", "mac", "cfm_mpid", "cfm_fault", "cfm_fault_status", "cfm_flap_count", "cfm_health", "cfm_remote_mpids", "cfm_remote_opstate"}},
	{Table: "Controller", Columns: []string{"target", "is_connected", "role", "status", "controller_rate_limit", "controller_burst_limit", "inactivity_probe"}},
	// All of Datapath's and CT_Zone's columns: Open vSwitch 3.2's schema
	// adds the zone limits (Datapath.ct_zone_default_limit, CT_Zone.limit),
	// read when the server has them.
	{Table: "Datapath", Columns: nil},
	{Table: "CT_Zone", Columns: nil},
	{Table: "CT_Timeout_Policy", Columns: []string{"timeouts"}},
	{Table: "Flow_Table", Columns: []string{"name", "flow_limit", "overflow_policy", "groups", "prefixes"}},
	// Flow export (flowexport.go): all columns, so the 3.2 schema's
	// additions are read when the server has them.
	{Table: "NetFlow", Columns: nil},
	{Table: "sFlow", Columns: nil},
	{Table: "IPFIX", Columns: nil},
	{Table: "Flow_Sample_Collector_Set", Columns: nil},
	{Table: "Mirror", Columns: []string{"name", "select_all", "select_src_port", "select_dst_port", "select_vlan", "output_port", "output_vlan", "snaplen", "statistics"}},
}

func str(d model.Datum) string {
	if len(d.Keys) == 0 {
		return ""
	}
	s, _ := d.Keys[0].(string)
	return s
}

func integer(d model.Datum, def int64) int64 {
	if len(d.Keys) == 0 {
		return def
	}
	n, ok := d.Keys[0].(int64)
	if !ok {
		return def
	}
	return n
}

func strMap(d model.Datum) map[string]string {
	m := make(map[string]string, len(d.Keys))
	for i, k := range d.Keys {
		ks, _ := k.(string)
		var vs string
		if i < len(d.Values) {
			vs, _ = d.Values[i].(string)
		}
		m[ks] = vs
	}
	return m
}

func strs(d model.Datum) []string {
	out := make([]string, 0, len(d.Keys))
	for _, k := range d.Keys {
		if s, ok := k.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func ints(d model.Datum) []int64 {
	out := make([]int64, 0, len(d.Keys))
	for _, k := range d.Keys {
		if n, ok := k.(int64); ok {
			out = append(out, n)
		}
	}
	return out
}

func uuids(d model.Datum) []model.UUID {
	out := make([]model.UUID, 0, len(d.Keys))
	for _, k := range d.Keys {
		if u, ok := k.(model.UUID); ok {
			out = append(out, u)
		}
	}
	return out
}

// RootRow returns the Open_vSwitch row, or nil before `ovs-vsctl init`.
func RootRow(s *client.Snapshot) *client.Row {
	rows := s.Rows("Open_vSwitch")
	if len(rows) == 0 {
		return nil
	}
	return rows[0]
}

// Parse reads the desired configuration from a replica snapshot: the
// bridges the Open_vSwitch row references, their ports and interfaces,
// and the datapaths' conntrack zones.
// Rows that reference missing rows are skipped, as Open vSwitch does.
func Parse(s *client.Snapshot) Config {
	root := RootRow(s)
	if root == nil {
		return Config{}
	}
	cfg := Config{NextCfg: integer(root.Get("next_cfg"), 0), OtherConfig: strMap(root.Get("other_config")),
		Datapaths: parseDatapaths(s, root)}
	for _, bu := range uuids(root.Get("bridges")) {
		br := s.Row("Bridge", bu)
		if br == nil {
			continue
		}
		bc := BridgeConfig{
			UUID:         bu.String(),
			Name:         str(br.Get("name")),
			DatapathType: str(br.Get("datapath_type")),
			FailMode:     str(br.Get("fail_mode")),
			OtherConfig:  strMap(br.Get("other_config")),
			ExternalIDs:  strMap(br.Get("external_ids")),
			Protocols:    strs(br.Get("protocols")),
		}
		bc.McastSnooping, _ = boolean(br.Get("mcast_snooping_enable"))
		bc.STP, _ = boolean(br.Get("stp_enable"))
		bc.RSTP, _ = boolean(br.Get("rstp_enable"))
		for _, cu := range uuids(br.Get("controller")) {
			if c := s.Row("Controller", cu); c != nil {
				t := str(c.Get("target"))
				bc.Controllers = append(bc.Controllers, t)
				if bc.ControllerRows == nil {
					bc.ControllerRows = map[string]string{}
				}
				bc.ControllerRows[t] = cu.String()
				if rate := optInt64(c.Get("controller_rate_limit")); rate != nil {
					var burst int64
					if b := optInt64(c.Get("controller_burst_limit")); b != nil {
						burst = *b
					}
					if bc.ControllerLimits == nil {
						bc.ControllerLimits = map[string][2]int64{}
					}
					bc.ControllerLimits[t] = [2]int64{*rate, burst}
				}
				if p := optInt64(c.Get("inactivity_probe")); p != nil {
					if bc.ControllerProbes == nil {
						bc.ControllerProbes = map[string]int64{}
					}
					bc.ControllerProbes[t] = *p
				}
			}
		}
		sort.Strings(bc.Controllers)
		for _, pu := range uuids(br.Get("ports")) {
			pr := s.Row("Port", pu)
			if pr == nil {
				continue
			}
			pc := PortConfig{
				UUID:     pu.String(),
				Name:     str(pr.Get("name")),
				Tag:      integer(pr.Get("tag"), -1),
				Trunks:   ints(pr.Get("trunks")),
				VLANMode: str(pr.Get("vlan_mode")),
				Bond: BondConfig{
					Mode:        str(pr.Get("bond_mode")),
					LACP:        str(pr.Get("lacp")),
					UpDelay:     integer(pr.Get("bond_updelay"), 0),
					DownDelay:   integer(pr.Get("bond_downdelay"), 0),
					ActiveSlave: str(pr.Get("bond_active_slave")),
					OtherConfig: strMap(pr.Get("other_config")),
				},
			}
			for _, iu := range uuids(pr.Get("interfaces")) {
				ir := s.Row("Interface", iu)
				if ir == nil {
					continue
				}
				pc.Interfaces = append(pc.Interfaces, IfaceConfig{
					UUID:          iu.String(),
					Name:          str(ir.Get("name")),
					Type:          str(ir.Get("type")),
					Options:       strMap(ir.Get("options")),
					OfportRequest: integer(ir.Get("ofport_request"), 0),
					Ofport:        integer(ir.Get("ofport"), 0),
					MTURequest:    integer(ir.Get("mtu_request"), 0),
					ExternalIDs:   strMap(ir.Get("external_ids")),
					BFD:           strMap(ir.Get("bfd")),
					OtherConfig:   strMap(ir.Get("other_config")),
					MAC:           str(ir.Get("mac")),
					LACP:          pc.Bond.LACP == "active" || pc.Bond.LACP == "passive",
				})
				if m := ints(ir.Get("cfm_mpid")); len(m) == 1 {
					ic := &pc.Interfaces[len(pc.Interfaces)-1]
					ic.CFMMPID, ic.CFMMPIDSet = m[0], true
				}
			}
			bc.Ports = append(bc.Ports, pc)
		}
		bc.FlowTables = parseFlowTables(s, br)
		bc.FlowExport = parseFlowExport(s, bc.Name, bu, br, len(bc.Ports))
		bc.Mirrors = parseMirrors(s, bc.Name, br, bc.Ports, &bc.MirrorWarnings)
		cfg.Bridges = append(cfg.Bridges, bc)
	}
	sort.Slice(cfg.Bridges, func(i, j int) bool { return cfg.Bridges[i].Name < cfg.Bridges[j].Name })
	assignSFlowSubIDs(cfg.Bridges)
	return cfg
}
