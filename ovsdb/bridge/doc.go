// Package bridge is gvs's counterpart of Open vSwitch's vswitchd/bridge.c:
// it turns the Open_vSwitch database's Bridge, Port and Interface rows into
// bridges and ports of a Switch, applies changes incrementally (a new port
// never disturbs the others; a bad row yields Interface.error and leaves the
// rest working), and computes what to write back (ofport, ifindex,
// mac_in_use, mtu, admin_state, link_state, statistics, error, and the
// Open_vSwitch/Bridge status columns). It also reads Open_vSwitch.datapaths
// (Datapath, CT_Zone, CT_Timeout_Policy: per-zone conntrack timeout
// policies, and the zone limits of Open vSwitch 3.2's schema when the
// server has them) and hands them to a Switch that implements
// ConntrackConfigurer. Bridge.netflow, sflow and ipfix and the
// Flow_Sample_Collector_Set rows are parsed with Open vSwitch's defaults
// (flowexport.go) and handed to a Switch that implements
// FlowExportConfigurer when they change.
//
// The Switch interface is implemented by vswitchd/backer (Open vSwitch's
// ofproto-dpif backer, which opens ports by type over the userspace
// datapaths and gives each bridge its ofproto/ofswitch.Bridge); this
// package knows nothing of packets or OpenFlow messages. Desired state
// arrives as a Config parsed from database rows (see Parse) so the
// reconciliation logic is testable without a database.
//
// It imports ovsdb/model and ovsdb/client only.
package bridge
