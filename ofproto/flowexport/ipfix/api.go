package ipfix

import "time"

// Config is one IPFIX row: Bridge.ipfix, or a Flow_Sample_Collector_Set's.
type Config struct {
	Targets     []string // "host:port"; the port defaults to 4739
	ObsDomainID uint32   // observation domain of samples that do not override it
	ObsPointID  uint32   // observationPointId of samples that do not override it
	// CacheActiveTimeout and CacheMaxFlows control the flow cache as in
	// Open vSwitch: a sample is aggregated into the cached record with the
	// same flow key; Run exports records older than CacheActiveTimeout
	// (flowEndReason activeTimeout), and a new flow beyond CacheMaxFlows
	// exports the oldest records (lackOfResources). CacheMaxFlows 0 thus
	// means no caching: every sample is exported as it arrives. With
	// CacheActiveTimeout 0 and CacheMaxFlows > 0 records wait for the next
	// Run.
	CacheActiveTimeout time.Duration
	CacheMaxFlows      uint32
	TemplateInterval   time.Duration // templates are re-sent this often per domain; 0 = 600 s
	// StatsInterval is how often the exporting-process reliability
	// statistics (an options data record) are sent; 0 = 600 s.
	StatsInterval time.Duration
	// VirtualObsID, if not empty, adds the VMware virtualObsID (PEN 6876,
	// element 898) to every template and record (at most 254 bytes).
	VirtualObsID string
	// ExporterID is the exportingProcessId of the statistics record
	// (Open vSwitch numbers its exporters from 1); 0 means 1.
	ExporterID uint32
}

// Sample is one sampled packet.
type Sample struct {
	Packet          []byte // the frame from the Ethernet header on (not retained after the call)
	InPort, OutPort uint32 // ingressInterface/egressInterface (Open vSwitch: the ifindex; 0 if none)
	InName, OutName string // interfaceName (at most 64 bytes are sent)
	// InIfType, OutIfType are ingress/egressInterfaceType (IANA ifType, as
	// the netdev status "if_type"; 0 if unknown).
	InIfType, OutIfType uint32
	// Egress selects the egress templates (flowDirection 1), which also
	// carry the output interface.
	Egress                  bool
	ObsDomainID, ObsPointID uint32 // flow-based sampling overrides (0 = use Config's)
	// PacketDeltaCount is how many packets this sample stands for (Open
	// vSwitch: UINT32_MAX/probability for bridge sampling, USHRT_MAX/
	// probability for the sample() action); 0 means 1.
	PacketDeltaCount uint64
	// Dropped says the datapath actions had no output: the packets count
	// as dropped (droppedPacketDeltaCount, droppedOctetDeltaCount).
	Dropped bool
	// Tunnel, if not nil, selects the tunnel templates and fills the
	// VMware tunnel elements (Open vSwitch: enable-tunnel-sampling, for a
	// packet received from or sent to a tunnel port).
	Tunnel *Tunnel
}

// Tunnel is the outer header of a tunneled sample.
type Tunnel struct {
	Type             uint8   // TunnelVXLAN, TunnelGRE or TunnelGeneve
	Src, Dst         [4]byte // outer IPv4 addresses
	SrcPort, DstPort uint16  // outer transport ports
	// ID is the tunnel ID (VNI or GRE key); its low 3 (VXLAN, Geneve) or
	// 4 (GRE) bytes are sent as tunnelKey.
	ID uint64
}

// Tunnel types (VMware tunnelType), as Open vSwitch's DPIF_IPFIX_TUNNEL_*.
const (
	TunnelVXLAN  = 1
	TunnelGRE    = 2
	TunnelGeneve = 7
)

// Stats are the exporter statistics, as `ovs-ofctl dump-ipfix-bridge`
// prints them.
type Stats struct {
	SampledPackets, IPv4OK, IPv6OK, TxPackets, TxErrors, CurrentFlows, Flows uint64
	Errors, IPv4Errors, IPv6Errors                                           uint64
}

// DefaultPort is Open vSwitch's IPFIX_DEFAULT_COLLECTOR_PORT.
const DefaultPort = 4739

// DefaultTemplateInterval is Open vSwitch's default template_interval
// and stats_interval.
const DefaultTemplateInterval = 600 * time.Second

// Flow end reasons (RFC 5102 flowEndReason).
const (
	EndIdleTimeout     = 1
	EndActiveTimeout   = 2
	EndOfFlowDetected  = 3
	EndForced          = 4
	EndLackOfResources = 5
)
