package ipfix

import "encoding/binary"

// ie is one information element as a template lists it: element ID, field
// length (0 = variable length, sent as 0xffff) and enterprise number.
type ie struct {
	id   uint16
	size uint16
	pen  uint32
}

// penVMware is the VMware private enterprise number, under which Open
// vSwitch defines its tunnel and virtual-observation elements
// (ofproto/ipfix-enterprise-entities.def).
const penVMware = 6876

// The information elements Open vSwitch's templates use (IANA IPFIX
// registry IDs; sizes from the registry data types).
var (
	ieObservationPointID       = ie{138, 4, 0}
	ieFlowDirection            = ie{61, 1, 0}
	ieSourceMAC                = ie{56, 6, 0}
	ieDestinationMAC           = ie{80, 6, 0}
	ieEthernetType             = ie{256, 2, 0}
	ieEthernetHeaderLength     = ie{240, 1, 0}
	ieIngressInterface         = ie{10, 4, 0}
	ieIngressInterfaceType     = ie{368, 4, 0}
	ieInterfaceName            = ie{82, 0, 0}
	ieInterfaceDescription     = ie{83, 0, 0}
	ieEgressInterface          = ie{14, 4, 0}
	ieEgressInterfaceType      = ie{369, 4, 0}
	ieVLANID                   = ie{58, 2, 0}
	ieDot1qVLANID              = ie{243, 2, 0}
	ieDot1qPriority            = ie{244, 1, 0}
	ieIPVersion                = ie{60, 1, 0}
	ieIPTTL                    = ie{192, 1, 0}
	ieProtocolIdentifier       = ie{4, 1, 0}
	ieIPDiffServCodePoint      = ie{195, 1, 0}
	ieIPPrecedence             = ie{196, 1, 0}
	ieIPClassOfService         = ie{5, 1, 0}
	ieSourceIPv4               = ie{8, 4, 0}
	ieDestinationIPv4          = ie{12, 4, 0}
	ieSourceIPv6               = ie{27, 16, 0}
	ieDestinationIPv6          = ie{28, 16, 0}
	ieFlowLabelIPv6            = ie{31, 4, 0}
	ieSourceTransportPort      = ie{7, 2, 0}
	ieDestinationTransportPort = ie{11, 2, 0}
	ieICMPTypeIPv4             = ie{176, 1, 0}
	ieICMPCodeIPv4             = ie{177, 1, 0}
	ieICMPTypeIPv6             = ie{178, 1, 0}
	ieICMPCodeIPv6             = ie{179, 1, 0}

	ieTunnelType              = ie{891, 1, penVMware}
	ieTunnelKey               = ie{892, 0, penVMware}
	ieTunnelSourceIPv4        = ie{893, 4, penVMware}
	ieTunnelDestinationIPv4   = ie{894, 4, penVMware}
	ieTunnelProtocol          = ie{895, 1, penVMware}
	ieTunnelSourcePort        = ie{896, 2, penVMware}
	ieTunnelDestinationPort   = ie{897, 2, penVMware}
	ieVirtualObsID            = ie{898, 0, penVMware}
	ieExportingProcessID      = ie{144, 4, 0}
	ieNotSentPacketTotalCount = ie{167, 8, 0}
)

// The per-flow counters every template carries, in order.
var commonCounters = []ie{
	{158, 4, 0}, // flowStartDeltaMicroseconds
	{159, 4, 0}, // flowEndDeltaMicroseconds
	{133, 8, 0}, // droppedPacketDeltaCount
	{135, 8, 0}, // droppedPacketTotalCount
	{2, 8, 0},   // packetDeltaCount
	{86, 8, 0},  // packetTotalCount
	{354, 8, 0}, // ingressUnicastPacketTotalCount
	{355, 8, 0}, // ingressMulticastPacketTotalCount
	{356, 8, 0}, // ingressBroadcastPacketTotalCount
	{357, 8, 0}, // egressUnicastPacketTotalCount
	{358, 8, 0}, // egressBroadcastPacketTotalCount
	{19, 8, 0},  // postMCastPacketDeltaCount
	{174, 8, 0}, // postMCastPacketTotalCount
	{352, 8, 0}, // layer2OctetDeltaCount
	{353, 8, 0}, // layer2OctetTotalCount
	{136, 1, 0}, // flowEndReason
}

// The counters IP templates add, in order.
var ipCounters = []ie{
	{132, 8, 0}, // droppedOctetDeltaCount
	{134, 8, 0}, // droppedOctetTotalCount
	{1, 8, 0},   // octetDeltaCount
	{85, 8, 0},  // octetTotalCount
	{198, 8, 0}, // octetDeltaSumOfSquares
	{199, 8, 0}, // octetTotalSumOfSquares
	{25, 8, 0},  // minimumIpTotalLength
	{26, 8, 0},  // maximumIpTotalLength
	{20, 8, 0},  // postMCastOctetDeltaCount
	{175, 8, 0}, // postMCastOctetTotalCount
}

// The counters TCP templates add, in order.
var tcpCounters = []ie{
	{222, 8, 0}, // tcpAckTotalCount
	{219, 8, 0}, // tcpFinTotalCount
	{221, 8, 0}, // tcpPshTotalCount
	{220, 8, 0}, // tcpRstTotalCount
	{218, 8, 0}, // tcpSynTotalCount
	{223, 8, 0}, // tcpUrgTotalCount
}

// Template dimensions, in Open vSwitch's order; the template ID is
// their mixed-radix number plus 256.
const (
	l2Eth, l2VLAN, numL2                           = 0, 1, 2
	l3Unknown, l3IPv4, l3IPv6, numL3               = 0, 1, 2, 3
	l4Unknown, l4TCP, l4UDP, l4SCTP, l4ICMP, numL4 = 0, 1, 2, 3, 4, 5
	numTunnel                                      = 2
	numDirection                                   = 2
	templateIDMin                                  = 256
)

func templateID(l2, l3, l4, tunnel, dir int) uint16 {
	return uint16(templateIDMin + (((l2*numL3+l3)*numL4+l4)*numTunnel+tunnel)*numDirection + dir)
}

// optionsTemplateID is the exporting-process statistics options template:
// the first ID after all data templates, as Open vSwitch numbers it.
var optionsTemplateID = templateID(numL2, numL3, numL4, numTunnel, numDirection)

// templateFields lists the fields of one data template, in the order the
// data records are written.
func templateFields(l2, l3, l4, tunnel, dir int, virtualObs bool) []ie {
	f := []ie{
		ieObservationPointID, ieFlowDirection,
		ieSourceMAC, ieDestinationMAC, ieEthernetType, ieEthernetHeaderLength,
		ieIngressInterface, ieIngressInterfaceType, ieInterfaceName, ieInterfaceDescription,
	}
	if dir == 1 {
		f = append(f, ieEgressInterface, ieEgressInterfaceType, ieInterfaceName, ieInterfaceDescription)
	}
	if l2 == l2VLAN {
		f = append(f, ieVLANID, ieDot1qVLANID, ieDot1qPriority)
	}
	if l3 != l3Unknown {
		f = append(f, ieIPVersion, ieIPTTL, ieProtocolIdentifier,
			ieIPDiffServCodePoint, ieIPPrecedence, ieIPClassOfService)
		if l3 == l3IPv4 {
			f = append(f, ieSourceIPv4, ieDestinationIPv4)
		} else {
			f = append(f, ieSourceIPv6, ieDestinationIPv6, ieFlowLabelIPv6)
		}
		switch l4 {
		case l4TCP, l4UDP, l4SCTP:
			f = append(f, ieSourceTransportPort, ieDestinationTransportPort)
		case l4ICMP:
			if l3 == l3IPv4 {
				f = append(f, ieICMPTypeIPv4, ieICMPCodeIPv4)
			} else {
				f = append(f, ieICMPTypeIPv6, ieICMPCodeIPv6)
			}
		}
	}
	if tunnel == 1 {
		f = append(f, ieTunnelSourceIPv4, ieTunnelDestinationIPv4, ieTunnelProtocol,
			ieTunnelSourcePort, ieTunnelDestinationPort, ieTunnelType, ieTunnelKey)
	}
	if virtualObs {
		f = append(f, ieVirtualObsID)
	}
	f = append(f, commonCounters...)
	if l3 != l3Unknown {
		f = append(f, ipCounters...)
	}
	if l4 == l4TCP {
		f = append(f, tcpCounters...)
	}
	return f
}

// appendField appends a field specifier (RFC 7011 §3.2).
func appendField(b []byte, f ie) []byte {
	size := f.size
	if size == 0 {
		size = 0xffff // variable length
	}
	if f.pen != 0 {
		b = binary.BigEndian.AppendUint16(b, f.id|0x8000)
		b = binary.BigEndian.AppendUint16(b, size)
		return binary.BigEndian.AppendUint32(b, f.pen)
	}
	b = binary.BigEndian.AppendUint16(b, f.id)
	return binary.BigEndian.AppendUint16(b, size)
}

// maxMessageLen is the size past which Open vSwitch starts a new template
// message (MAX_MESSAGE_LEN): records are added while the message is
// shorter, so a message may exceed it by one record.
const maxMessageLen = 1024

// templateSets builds the template set bodies (set header included, no
// message header) that announce every data template, split as Open
// vSwitch splits them.
func templateSets(virtualObs bool) [][]byte {
	var sets [][]byte
	var cur []byte
	start := func() { cur = []byte{0, setIDTemplate, 0, 0} }
	finish := func() {
		binary.BigEndian.PutUint16(cur[2:], uint16(len(cur)))
		sets = append(sets, cur)
	}
	start()
	for l2 := 0; l2 < numL2; l2++ {
		for l3 := 0; l3 < numL3; l3++ {
			for l4 := 0; l4 < numL4; l4++ {
				if l3 == l3Unknown && l4 != l4Unknown {
					continue
				}
				for tun := 0; tun < numTunnel; tun++ {
					for dir := 0; dir < numDirection; dir++ {
						if headerLen+len(cur) >= maxMessageLen {
							finish()
							start()
						}
						fields := templateFields(l2, l3, l4, tun, dir, virtualObs)
						cur = binary.BigEndian.AppendUint16(cur, templateID(l2, l3, l4, tun, dir))
						cur = binary.BigEndian.AppendUint16(cur, uint16(len(fields)))
						for _, f := range fields {
							cur = appendField(cur, f)
						}
					}
				}
			}
		}
	}
	finish()
	return sets
}

// optionsTemplateSet builds the options template set announcing the
// exporting-process reliability statistics record.
func optionsTemplateSet() []byte {
	b := []byte{0, setIDOptionsTemplate, 0, 0}
	b = binary.BigEndian.AppendUint16(b, optionsTemplateID)
	b = binary.BigEndian.AppendUint16(b, 2) // field count
	b = binary.BigEndian.AppendUint16(b, 1) // scope field count
	b = appendField(b, ieExportingProcessID)
	b = appendField(b, ieNotSentPacketTotalCount)
	binary.BigEndian.PutUint16(b[2:], uint16(len(b)))
	return b
}
