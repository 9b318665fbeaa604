package tnl

// The tunnel types of Open vSwitch 3.1's netdev-vport, one row each: the
// Interface type, the datapath port that stands for its ports, its UDP
// port, what its options allow and whether this package builds, pushes and
// pops its header (native tunnelling). A type without native support is
// still a datapath vport: its ports can be configured, listed and used
// with tnl_push_pop switched off (set(tunnel(...)) then output), as with
// Open vSwitch's userspace datapath.

// Tunnel types without native support here.
const (
	TypeLISP      Type = 105
	TypeSTT       Type = 106
	TypeERSPAN    Type = 107
	TypeIP6ERSPAN Type = 108
	TypeGTPU      Type = 110
	TypeBareUDP   Type = 111
)

// PortGTPU, PortLISP and PortSTT are the other types' default UDP ports.
const (
	PortLISP = 4341
	PortSTT  = 7471
	PortGTPU = 2152
)

// TypeInfo describes a tunnel type.
type TypeInfo struct {
	Type Type
	// Name is the Interface type ("geneve").
	Name string
	// DPPort is the datapath port's name, or its prefix before
	// "_PORT" for a UDP tunnel ("genev_sys").
	DPPort string
	// UDP: the tunnel runs over UDP, options:dst_port sets the port
	// (DefaultPort when not set; bareudp has none).
	UDP         bool
	DefaultPort uint16
	// Csum and Seq: options:csum and options:seq are accepted.
	Csum, Seq bool
	// L2 and L3: the tunnel carries Ethernet frames, bare L3 packets.
	L2, L3 bool
	// ERSPAN: the erspan_* options are accepted.
	ERSPAN bool
	// Native: Build, Push and Pop support the type.
	Native bool
	// IPProto is the outer IP protocol native tunnelling pops (UDP,
	// TCP for STT, GRE); 0 for types Open vSwitch's tunnel port map
	// leaves out (lisp, bareudp), which tnl/ports/show does not list.
	IPProto uint8
}

// Types are the tunnel types, in Open vSwitch's registration order.
var Types = []TypeInfo{
	{Type: TypeGeneve, Name: "geneve", DPPort: "genev_sys", UDP: true, DefaultPort: PortGeneve, Csum: true, L2: true, Native: true, IPProto: 17},
	{Type: TypeGRE, Name: "gre", DPPort: "gre_sys", Csum: true, Seq: true, L2: true, L3: true, Native: true, IPProto: 47},
	{Type: TypeVXLAN, Name: "vxlan", DPPort: "vxlan_sys", UDP: true, DefaultPort: PortVXLAN, Csum: true, L2: true, Native: true, IPProto: 17},
	{Type: TypeLISP, Name: "lisp", DPPort: "lisp_sys", UDP: true, DefaultPort: PortLISP, L3: true},
	{Type: TypeSTT, Name: "stt", DPPort: "stt_sys", UDP: true, DefaultPort: PortSTT, Csum: true, L2: true, IPProto: 6},
	{Type: TypeERSPAN, Name: "erspan", DPPort: "erspan_sys", L2: true, ERSPAN: true, IPProto: 47},
	{Type: TypeIP6ERSPAN, Name: "ip6erspan", DPPort: "ip6erspan_sys", L2: true, ERSPAN: true, IPProto: 47},
	{Type: TypeIP6GRE, Name: "ip6gre", DPPort: "ip6gre_sys", Csum: true, Seq: true, L2: true, L3: true, Native: true, IPProto: 47},
	{Type: TypeGTPU, Name: "gtpu", DPPort: "gtpu_sys", UDP: true, DefaultPort: PortGTPU, L3: true, IPProto: 17},
	{Type: TypeBareUDP, Name: "bareudp", DPPort: "udp_sys", UDP: true, L3: true},
}

// TypeByName returns the tunnel type of an Interface type.
func TypeByName(name string) (TypeInfo, bool) {
	for _, t := range Types {
		if t.Name == name {
			return t, true
		}
	}
	return TypeInfo{}, false
}

// Info returns t's row (the zero TypeInfo for an unknown type).
func (t Type) Info() TypeInfo {
	for _, i := range Types {
		if i.Type == t {
			return i
		}
	}
	return TypeInfo{}
}
