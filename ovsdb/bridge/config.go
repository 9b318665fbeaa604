package bridge

import "sort"

// Config is the desired state read from the database.
type Config struct {
	// NextCfg is Open_vSwitch.next_cfg; once applied it is written to
	// cur_cfg, which is what `ovs-vsctl --wait` waits for.
	NextCfg int64
	// OtherConfig is Open_vSwitch.other_config (flow-restore-wait,
	// max-idle, ...), handed to a GlobalConfigurer.
	OtherConfig map[string]string
	Bridges     []BridgeConfig
	// Datapaths is Open_vSwitch.datapaths by datapath type ("netdev",
	// "system", ...): per-zone conntrack timeout policies and limits.
	Datapaths map[string]DatapathConfig
}

// BridgeConfig is one Bridge row with its ports.
type BridgeConfig struct {
	UUID         string
	Name         string
	DatapathType string // "" means "system" in Open vSwitch; gvs maps both to its userspace datapath
	FailMode     string // "", "secure" or "standalone"
	OtherConfig  map[string]string
	ExternalIDs  map[string]string
	Controllers  []string // Controller.target values
	// ControllerRows maps each target to its Controller row's UUID, for
	// the status write-back.
	ControllerRows map[string]string
	// ControllerLimits are the packet-in rate limits of the targets that
	// set Controller.controller_rate_limit: packets per second and burst
	// (controller_burst_limit, 0 when unset).
	ControllerLimits map[string][2]int64
	// ControllerProbes are the Controller rows' inactivity_probe
	// (milliseconds) of the targets that set one.
	ControllerProbes map[string]int64
	Protocols        []string
	Ports            []PortConfig
	// FlowExport is the NetFlow, sFlow and IPFIX configuration; nil
	// when none.
	FlowExport *FlowExportConfig
	// FlowTables is the flow_tables column: OpenFlow table id to its
	// Flow_Table row (flowtable.go); nil when empty.
	FlowTables map[int64]FlowTableConfig
	// Mirrors are the Mirror rows of the bridge's mirrors column
	// (mirror.go), and MirrorWarnings the rows left out, worded as Open
	// vSwitch logs them.
	Mirrors        []MirrorConfig
	MirrorWarnings []string
	// McastSnooping is mcast_snooping_enable (its settings are in
	// other_config, and the ports' in their Port rows' other_config).
	McastSnooping bool
	// STP and RSTP are stp_enable and rstp_enable (their settings are in
	// other_config, the ports' in their Port rows' other_config).
	STP, RSTP bool
}

// PortConfig is one Port row with its interfaces.
type PortConfig struct {
	UUID       string
	Name       string
	Tag        int64 // -1 when unset
	Trunks     []int64
	VLANMode   string
	Interfaces []IfaceConfig
	// Bond is the bonding and LACP configuration: it applies when the
	// port has several interfaces, or LACP on one.
	Bond BondConfig
}

// BondConfig is a Port row's bonding and LACP columns.
type BondConfig struct {
	Mode        string // bond_mode
	LACP        string // lacp: active, passive, off or ""
	UpDelay     int64  // bond_updelay, ms
	DownDelay   int64  // bond_downdelay, ms
	ActiveSlave string // bond_active_slave: the last active member's MAC
	OtherConfig map[string]string
}

// IfaceConfig is one Interface row.
type IfaceConfig struct {
	UUID          string
	Name          string
	Type          string // "" means "system"
	Options       map[string]string
	OfportRequest int64 // 0 when unset
	// Ofport is the number the row already has (written back before a
	// restart); without an ofport_request it is asked for again, so
	// ports keep their numbers across restarts, as Open vSwitch's
	// iface_pick_ofport. 0 or -1 when none.
	Ofport      int64
	MTURequest  int64 // 0 when unset
	ExternalIDs map[string]string
	// BFD is the Interface.bfd map (a change does not re-add the
	// interface: the switch gets it through PortConfigurer).
	BFD map[string]string
	// OtherConfig is Interface.other_config (lacp-port-id,
	// lacp-port-priority, lacp-aggregation-key).
	OtherConfig map[string]string
	// MAC is Interface.mac: the address an internal interface takes
	// (applied without re-adding it).
	MAC string
	// CFMMPID is Interface.cfm_mpid when CFMMPIDSet (CFM is on; a
	// change does not re-add the interface).
	CFMMPID    int64
	CFMMPIDSet bool
	// LACP says the interface's Port runs LACP: it is not live until
	// LACP lets it be (a change does not re-add the interface).
	LACP bool
}

// IfaceStatus is what the bridge layer writes back to an Interface row.
type IfaceStatus struct {
	Ofport     int64 // -1 when the interface could not be added
	Ifindex    int64
	MACInUse   string
	MTU        int64
	AdminState string // "up" or "down"
	LinkState  string
	LinkResets int64  // link state changes seen since the interface was added
	LinkSpeed  int64  // bits per second; 0 when unknown
	Duplex     string // "full", "half" or "" when unknown
	Error      string // "" when fine (a patch port without a usable peer has both an ofport and an error)
	Statistics map[string]int64
	Status     map[string]string
	// BFDStatus is Interface.bfd_status; nil (written as empty) without
	// a BFD session.
	BFDStatus map[string]string
	// CFM is the Interface cfm_* columns; nil (written as empty) without
	// CFM.
	CFM *CFMStatus
}

// CFMStatus is the Interface cfm_* columns of an interface with CFM.
type CFMStatus struct {
	Fault         bool
	FaultStatus   []string
	FlapCount     int64
	Health        int64 // -1: undefined (cfm_health empty)
	RemoteMPIDs   []int64
	RemoteOpState string // "up", "down" or "" (not extended: empty)
}

// BridgeStatus is what the bridge layer writes back to a Bridge row.
type BridgeStatus struct {
	DatapathID      string // 16 hex digits
	DatapathVersion string
}

// ControllerStatus is what the bridge layer writes back to a Controller
// row (active targets only, as Open vSwitch).
type ControllerStatus struct {
	IsConnected bool
	Role        string            // "other", "master", "slave"; "" when not connected
	Status      map[string]string // state, last_error, sec_since_connect, sec_since_disconnect
}

// Status is the complete write-back after a reconciliation.
type Status struct {
	CurCfg      int64
	Bridges     map[string]BridgeStatus     // by Bridge UUID
	Interfaces  map[string]IfaceStatus      // by Interface UUID
	Controllers map[string]ControllerStatus // by Controller UUID
	// Mirrors are Mirror.statistics (tx_packets, tx_bytes) by Mirror
	// UUID, for switches that are MirrorStatusers.
	Mirrors map[string]map[string]int64
	// BondActive is Port.bond_active_slave by Port UUID, for switches
	// that are BondStatusers.
	BondActive map[string]string
	// ConntrackErr is the Switch's error applying Config.Datapaths (nil
	// when fine or not attempted); it is retried on the next Apply.
	ConntrackErr error
	// Ignored are the bridges not configured for their invalid names
	// (validBridgeName); their rows get no status, so ovs-vsctl reports
	// their interfaces as not set up.
	Ignored []string
}

// IfaceRef names an interface within a bridge.
type IfaceRef struct {
	Bridge string
	Iface  string
}

// sortedIfaces returns every interface of a bridge in name order.
func (b *BridgeConfig) sortedIfaces() []IfaceConfig {
	var out []IfaceConfig
	for _, p := range b.Ports {
		out = append(out, p.Interfaces...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
