package backer

import (
	"errors"
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/datapath/netdev"
	"github.com/gvs-project/gvs/datapath/netdev/vport"
	"github.com/gvs-project/gvs/datapath/tnl"
	"github.com/gvs-project/gvs/ofproto/xlate"
	"github.com/gvs-project/gvs/ovsdb/bridge"
)

// Tunnel ports (the Interface types of datapath/tnl's Types: geneve,
// vxlan, gre, ip6gre, erspan, ip6erspan, gtpu, lisp, stt, bareudp) are
// datapath vports, as in Open vSwitch's userspace datapath: every tunnel
// port of a type and UDP port shares one datapath vport (genev_sys_6081,
// vxlan_sys_4789; gre_sys, erspan_sys, ..., for tunnels without a UDP
// port), which tnl_pop brings decapsulated packets in on; the OpenFlow
// port is picked by translation from the tunnel fields
// (xlate.TunnelReceive). Types without native support in datapath/tnl
// are configured and listed, and work with tnl_push_pop off.

func isTunnelType(t string) bool { _, ok := tnl.TypeByName(t); return ok }

// tunnelType returns the row of an Interface type known to be a tunnel.
func tunnelType(typ string) tnl.TypeInfo { tt, _ := tnl.TypeByName(typ); return tt }

// vportName is the datapath vport a tunnel's packets come in on.
func vportName(t *xlate.TunnelConfig) string {
	tt := tunnelType(t.Type)
	return vport.Name(tt.Type, t.DstPort)
}

// vportRef is a datapath tunnel vport shared by the tunnel ports of one
// type and UDP port.
type vportRef struct {
	name string
	no   dpif.PortNo
	dev  netdev.Device
	refs int
	// gbp: the VXLAN vport carries the Group Based Policy extension.
	gbp bool
}

// errVportConflict is a tunnel whose vport exists with an incompatible
// setting (Open vSwitch's EEXIST from set_tunnel_config).
type errVportConflict struct{ msg string }

func (e *errVportConflict) Error() string { return e.msg }

// parseTunnel reads a tunnel Interface's options as Open vSwitch's
// set_tunnel_config does, with its error messages.
func parseTunnel(name, typ string, opts map[string]string) (*xlate.TunnelConfig, error) {
	tt := tunnelType(typ)
	t := &xlate.TunnelConfig{Type: typ, DstPort: tt.DefaultPort, DontFragment: true}
	var errs []string
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := opts[k]
		switch k {
		case "remote_ip":
			if v == "flow" {
				t.RemoteFlow = true
			} else if a, err := netip.ParseAddr(v); err != nil {
				errs = append(errs, fmt.Sprintf("%s: bad %s 'remote_ip'", name, typ))
			} else if a.IsMulticast() {
				return nil, fmt.Errorf("%s: multicast remote_ip=%s not allowed", name, v)
			} else {
				t.RemoteIP = a.Unmap()
			}
		case "local_ip":
			if v == "flow" {
				t.LocalFlow = true
			} else if a, err := netip.ParseAddr(v); err != nil {
				errs = append(errs, fmt.Sprintf("%s: bad %s 'local_ip'", name, typ))
			} else {
				t.LocalIP = a.Unmap()
			}
		case "tos":
			if v == "inherit" {
				t.TosInherit = true
			} else if n, err := strconv.ParseInt(v, 0, 32); err == nil && n == n&0xfc {
				t.Tos = uint8(n)
			} else {
				errs = append(errs, fmt.Sprintf("%s: invalid TOS %s", name, v))
			}
		case "ttl":
			if v == "inherit" {
				t.TTLInherit = true
			} else {
				n, _ := strconv.Atoi(v)
				t.TTL = uint8(n)
			}
		case "dst_port":
			if !tt.UDP {
				errs = append(errs, fmt.Sprintf("%s: unknown %s argument '%s'", name, typ, k))
				break
			}
			n, _ := strconv.Atoi(v)
			t.DstPort = uint16(n)
		case "csum":
			if !tt.Csum {
				errs = append(errs, fmt.Sprintf("%s: unknown %s argument '%s'", name, typ, k))
				break
			}
			t.Csum = v == "true"
		case "seq":
			if !tt.Seq {
				errs = append(errs, fmt.Sprintf("%s: unknown %s argument '%s'", name, typ, k))
				break
			}
			t.Seq = v == "true"
		case "df_default":
			if v == "false" {
				t.DontFragment = false
			}
		case "key", "in_key", "out_key", "packet_type", "remote_cert", "remote_name", "psk":
		case "egress_pkt_mark":
			n, _ := strconv.ParseUint(v, 10, 32)
			t.EgressPktMark, t.SetEgressPktMark = uint32(n), true
		case "exts":
			if typ != "vxlan" {
				errs = append(errs, fmt.Sprintf("%s: unknown %s argument '%s'", name, typ, k))
				break
			}
			for _, ext := range strings.Split(v, ",") {
				switch ext {
				case "gbp":
					t.GBP = true
				case "":
				default:
					// VXLAN-GPE (gpe) is not built here.
					errs = append(errs, fmt.Sprintf("%s: unknown extension '%s'", name, ext))
				}
			}
		case "erspan_idx", "erspan_ver", "erspan_dir", "erspan_hwid":
			if err := parseERSPAN(&t.ERSPAN, name, k, v); err != nil {
				return nil, err
			}
		default:
			errs = append(errs, fmt.Sprintf("%s: unknown %s argument '%s'", name, typ, k))
		}
	}
	full := typ
	if typ == "vxlan" {
		full = "VXLAN (without GPE)"
	}
	switch pt, ok := opts["packet_type"]; {
	case !ok && !tt.L2:
		// An L3 tunnel (lisp, gtpu, bareudp) is legacy_l3 by default:
		// configured and listed, but gvs's datapath has only Ethernet
		// packets, so translation drops what is output to it.
		t.L3 = true
	case !ok || pt == "ptap":
		// ptap is accepted as before (gvs's datapath has only
		// Ethernet packets).
	case pt == "legacy_l2":
		if !tt.L2 {
			errs = append(errs, fmt.Sprintf("%s: legacy_l2 configured on %s tunnel that cannot carry L2 traffic", name, full))
			return nil, fmt.Errorf("%s", strings.Join(errs, "\n"))
		}
	case pt == "legacy_l3":
		if !tt.L3 {
			errs = append(errs, fmt.Sprintf("%s: legacy_l3 configured on %s tunnel that cannot carry L3 traffic", name, full))
			return nil, fmt.Errorf("%s", strings.Join(errs, "\n"))
		}
		if tt.L2 {
			// Open vSwitch sends and receives bare L3 packets then
			// (pop_eth and packet_type); gvs's datapath does not have
			// them.
			return nil, fmt.Errorf("%s: packet_type=legacy_l3 is not supported by gvs (its datapath carries only Ethernet packets)", name)
		}
		t.L3 = true
	default:
		errs = append(errs, fmt.Sprintf("%s: unknown packet_type '%s'", name, pt))
		return nil, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	if !t.RemoteIP.IsValid() && !t.RemoteFlow {
		errs = append(errs, fmt.Sprintf("%s: %s type requires valid 'remote_ip' argument", name, typ))
		return nil, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	if t.LocalFlow && !t.RemoteFlow {
		errs = append(errs, fmt.Sprintf("%s: %s type requires 'remote_ip=flow' with 'local_ip=flow'", name, typ))
		return nil, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	if t.RemoteIP.IsValid() && t.LocalIP.IsValid() && t.RemoteIP.Is4() != t.LocalIP.Is4() {
		return nil, fmt.Errorf("%s: 'remote_ip' and 'local_ip' has to be of the same address family", name)
	}
	if t.TTL == 0 {
		t.TTL = 64
	}
	var inPresent, outPresent bool
	t.InKey, inPresent, t.InKeyFlow = parseKey(opts, "in_key")
	t.OutKey, outPresent, t.OutKeyFlow = parseKey(opts, "out_key")
	_ = inPresent
	t.OutKeyPresent = outPresent
	return t, nil
}

// parseKey reads in_key or out_key, falling back to key (parse_key).
func parseKey(opts map[string]string, name string) (key uint64, present, isFlow bool) {
	s, ok := opts[name]
	if !ok {
		if s, ok = opts["key"]; !ok {
			return 0, false, false
		}
	}
	if s == "flow" {
		return 0, true, true
	}
	key, _ = strconv.ParseUint(s, 0, 64)
	return key, true, false
}

// tunnelConfigText is the "(TYPE: k=v, ...)" part of dpif/show for a
// tunnel port, the options as Open vSwitch's get_tunnel_config reports
// them, sorted by name.
func tunnelConfigText(t *xlate.TunnelConfig, opts map[string]string) string {
	m := map[string]string{}
	switch {
	case t.RemoteFlow:
		m["remote_ip"] = "flow"
	case t.RemoteIP.IsValid():
		m["remote_ip"] = t.RemoteIP.String()
	}
	switch {
	case t.LocalFlow:
		m["local_ip"] = "flow"
	case t.LocalIP.IsValid():
		m["local_ip"] = t.LocalIP.String()
	}
	_, inPresent, _ := parseKey(opts, "in_key")
	switch {
	case t.InKeyFlow && t.OutKeyFlow:
		m["key"] = "flow"
	case inPresent && t.OutKeyPresent && !t.InKeyFlow && !t.OutKeyFlow && t.InKey == t.OutKey:
		m["key"] = strconv.FormatUint(t.InKey, 10)
	default:
		if t.InKeyFlow {
			m["in_key"] = "flow"
		} else if inPresent {
			m["in_key"] = strconv.FormatUint(t.InKey, 10)
		}
		if t.OutKeyFlow {
			m["out_key"] = "flow"
		} else if t.OutKeyPresent {
			m["out_key"] = strconv.FormatUint(t.OutKey, 10)
		}
	}
	if t.TTLInherit {
		m["ttl"] = "inherit"
	} else if t.TTL != 64 {
		m["ttl"] = strconv.Itoa(int(t.TTL))
	}
	if t.TosInherit {
		m["tos"] = "inherit"
	} else if t.Tos != 0 {
		m["tos"] = fmt.Sprintf("0x%x", t.Tos)
	}
	if tt := tunnelType(t.Type); tt.UDP && (t.DstPort != tt.DefaultPort || tt.DefaultPort == 0) {
		m["dst_port"] = strconv.Itoa(int(t.DstPort))
	}
	if t.Csum {
		m["csum"] = "true"
	}
	if t.Seq {
		m["seq"] = "true"
	}
	if !t.DontFragment {
		m["df_default"] = "false"
	}
	if t.SetEgressPktMark {
		m["egress_pkt_mark"] = strconv.FormatUint(uint64(t.EgressPktMark), 10)
	}
	if tunnelType(t.Type).ERSPAN {
		erspanConfigText(&t.ERSPAN, m)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	if len(parts) == 0 {
		return t.Type
	}
	return t.Type + ": " + strings.Join(parts, ", ")
}

// TunnelVportConfig is the ": k=v, ..." dpctl/show prints after a tunnel
// vport's type: Open vSwitch's datapath vports are in packet_type=ptap
// mode, and a UDP tunnel on a non-default port shows it. It is "" for
// other devices.
func TunnelVportConfig(dev netdev.Device) string {
	v, ok := dev.(*vport.Device)
	if !ok {
		return ""
	}
	if tt := tunnelType(v.Type()); tt.UDP && (v.DstPort() != tt.DefaultPort || tt.DefaultPort == 0) {
		return fmt.Sprintf(": dst_port=%d, packet_type=ptap", v.DstPort())
	}
	return ": packet_type=ptap"
}

// vportTable is the tunnel vports of the datapaths: tunnel ports of one
// type and UDP port share one datapath vport (Open vSwitch's
// tnl/ports/show "Listening ports"), counted by the ports that use it.
// It is guarded by the backer's mu.
type vportTable struct {
	dps *datapathSet
	// m are the vports by datapath type and vport name.
	m map[string]map[string]*vportRef
}

// acquire returns the datapath vport for a tunnel, adding it to the
// datapath on first use.
func (vt *vportTable) acquire(dpTyp string, t *xlate.TunnelConfig) (*vportRef, error) {
	name := vportName(t)
	if vt.m[dpTyp] == nil {
		vt.m[dpTyp] = map[string]*vportRef{}
	}
	if v := vt.m[dpTyp][name]; v != nil {
		if v.gbp != t.GBP {
			return nil, &errVportConflict{"VXLAN-GBP, and non-VXLAN-GBP tunnels can't be configured on the same dst_port"}
		}
		v.refs++
		return v, nil
	}
	dp := vt.dps.get(dpTyp)
	dev, err := vport.New(name, tunnelType(t.Type).Type, t.DstPort)
	if err != nil {
		return nil, err
	}
	want := dpif.PortNone
	if dpTyp == "dummy" {
		want = dummyPortNo(dp, name)
	}
	no, err := dp.AddPort(dev, want)
	if err != nil {
		dev.Close()
		return nil, err
	}
	v := &vportRef{name: name, no: no, dev: dev, refs: 1, gbp: t.GBP}
	vt.m[dpTyp][name] = v
	return v, nil
}

// release drops a tunnel port's reference on its vport, removing the
// vport from its datapath with the last one.
func (vt *vportTable) release(dpTyp string, t *xlate.TunnelConfig) {
	name := vportName(t)
	v := vt.m[dpTyp][name]
	if v == nil {
		return
	}
	if v.refs--; v.refs > 0 {
		return
	}
	delete(vt.m[dpTyp], name)
	vt.dps.get(dpTyp).DelPort(v.no)
	v.dev.Close()
}

// attach configures a tunnel interface on p, a port of a bridge of
// datapath type dpTyp.
func (vt *vportTable) attach(dpTyp string, ic *bridge.IfaceConfig, p *dpPort) error {
	t, err := parseTunnel(ic.Name, ic.Type, ic.Options)
	if err != nil {
		return err
	}
	v, err := vt.acquire(dpTyp, t)
	var conflict *errVportConflict
	if errors.As(err, &conflict) {
		return fmt.Errorf("%s: %w", ic.Name, conflict)
	}
	if err != nil {
		return fmt.Errorf("could not add network device %s to ofproto (%v)", ic.Name, err)
	}
	p.tunnel, p.tunnelOpts, p.odp = t, ic.Options, v.no
	randomMAC(&p.mac)
	return nil
}

// list returns the vports in datapath port number order.
func (vt *vportTable) list() []*vportRef {
	var vs []*vportRef
	for _, m := range vt.m {
		for _, v := range m {
			vs = append(vs, v)
		}
	}
	sort.Slice(vs, func(i, j int) bool { return vs[i].no < vs[j].no })
	return vs
}
