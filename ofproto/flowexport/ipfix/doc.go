// Package ipfix owns the IPFIX (RFC 7011) exporter for bridge- and
// flow-based sampling, as Open vSwitch's ofproto/ofproto-dpif-ipfix.c
// sends it: its template set, data records, flow cache, sequence numbers
// and exporting-process statistics.
//
// # Overview
//
// Sample parses the sampled frame with datapath/flow.Extract and picks
// one of 88 data templates, numbered 256 + ((((l2·3 + l3)·5 + l4)·2 +
// tunnel)·2 + direction) over l2 ∈ {Ethernet, VLAN}, l3 ∈ {other, IPv4,
// IPv6}, l4 ∈ {other, TCP, UDP, SCTP, ICMP}. Each template lists the flow
// key (observation point, direction, MACs, Ethertype, interfaces,
// VLAN, IP, ports) and then the counters (packet and L2 octet deltas and
// totals, IP octets and lengths, per-flag TCP totals); the tunnel
// templates use the VMware (PEN 6876) elements. The options template 462
// describes the exporting-process reliability record.
//
// Records are cached and aggregated by flow key according to
// Config.CacheActiveTimeout and CacheMaxFlows. Each record goes out in its
// own message, preceded, the first time and then every TemplateInterval,
// by all templates of its observation domain. Template messages carry the
// current sequence number; data messages advance it by one (it starts
// at 1). The exporting-process statistics record follows the templates
// (as Open vSwitch 3.1 sends it; later sources send it first, before a
// collector can know its template).
//
// A test compares templates, their split into messages, sequence numbers
// and record values with a live ovs-vswitchd when Open vSwitch is
// installed.
//
// Samples with a Tunnel use the tunnel templates (outer IPv4 addresses,
// protocol, ports, tunnel type and key).
//
// # Thread-safety
//
// All methods may be called from any goroutine; one mutex guards the
// state. Sample does not allocate when the cache is off or the flow is
// already cached.
//
// It imports only the standard library, datapath/flow and datapath/packet.
package ipfix
