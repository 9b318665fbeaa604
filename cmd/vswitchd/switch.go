package vswitchd

import (
	"crypto/rand"
	"errors"
	"fmt"
	"sync"

	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/datapath/netdev"
	"github.com/gvs-project/gvs/datapath/netdev/afpacket"
	"github.com/gvs-project/gvs/datapath/netdev/dummy"
	"github.com/gvs-project/gvs/datapath/netdev/tap"
	"github.com/gvs-project/gvs/ovsdb/bridge"
)

// dpSwitch implements bridge.Switch over the userspace datapaths: bridges
// and their ports, with OpenFlow port numbers allocated as Open vSwitch
// does. It has no OpenFlow tables yet (the OpenFlow switch is issue 5's):
// packets that reach a bridge find no megaflow and are counted as lost.
type dpSwitch struct {
	d *Daemon

	mu      sync.Mutex
	bridges map[string]*swBridge
}

type swBridge struct {
	name  string
	dpTyp string
	dpid  uint64
	ports map[string]*swPort // by interface name
}

type swPort struct {
	name   string
	typ    string
	ofport int64
	odp    dpif.PortNo // dpif.PortNone for ports without a datapath port (patch)
	dev    netdev.Device
}

var _ bridge.Switch = (*dpSwitch)(nil)

func newDPSwitch(d *Daemon) *dpSwitch { return &dpSwitch{d: d, bridges: map[string]*swBridge{}} }

// dpType maps a Bridge.datapath_type to gvs's datapath: every type is the
// userspace datapath; "dummy" (Open vSwitch's test datapath) is a separate
// instance whose internal ports are in-memory, as in Open vSwitch.
func dpType(t string) string {
	if t == "dummy" {
		return "dummy"
	}
	return "netdev"
}

func (s *dpSwitch) AddBridge(cfg *bridge.BridgeConfig) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.bridges[cfg.Name]; ok {
		return fmt.Errorf("bridge %s exists", cfg.Name)
	}
	var b [8]byte
	rand.Read(b[2:])
	var dpid uint64
	for _, x := range b {
		dpid = dpid<<8 | uint64(x)
	}
	s.bridges[cfg.Name] = &swBridge{name: cfg.Name, dpTyp: dpType(cfg.DatapathType), dpid: dpid, ports: map[string]*swPort{}}
	return nil
}

func (s *dpSwitch) UpdateBridge(*bridge.BridgeConfig) error { return nil }

func (s *dpSwitch) DelBridge(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.bridges, name)
	return nil
}

// openDevice opens an interface's device by type, as Open vSwitch's
// netdev providers do.
func (s *dpSwitch) openDevice(b *swBridge, ic *bridge.IfaceConfig) (netdev.Device, error) {
	typ := ic.Type
	if typ == "internal" && (b.dpTyp == "dummy" || s.d.cfg.DisableSystem) {
		typ = "dummy" // Open vSwitch's dummy datapath has dummy internal ports
	}
	switch typ {
	case "dummy":
		return dummy.New(dummy.Config{Name: ic.Name, Pcap: ic.Options["pcap"], RxqPcap: ic.Options["rxq_pcap"], TxPcap: ic.Options["tx_pcap"]})
	case "", "system":
		if s.d.cfg.DisableSystem {
			return nil, fmt.Errorf("could not open network device %s (Address family not supported by protocol)", ic.Name)
		}
		dev, err := afpacket.Open(afpacket.Config{Name: ic.Name})
		if err != nil {
			return nil, fmt.Errorf("could not open network device %s (No such device)", ic.Name)
		}
		return dev, nil
	case "internal":
		dev, err := tap.Open(tap.Config{Name: ic.Name, MTU: int(ic.MTURequest)})
		if err != nil {
			return nil, fmt.Errorf("could not open network device %s (%v)", ic.Name, err)
		}
		return dev, nil
	}
	return nil, fmt.Errorf("could not open network device %s (Address family not supported by protocol)", ic.Name)
}

func (s *dpSwitch) AddPort(bname string, ic *bridge.IfaceConfig) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.bridges[bname]
	if b == nil {
		return -1, fmt.Errorf("no bridge %s", bname)
	}
	p := &swPort{name: ic.Name, typ: ic.Type, odp: dpif.PortNone}
	switch {
	case ic.Name == bname && ic.Type == "internal":
		p.ofport = bridge.OFPPLocal
	default:
		p.ofport = b.allocOfport(ic.OfportRequest)
	}
	if ic.Type == "patch" {
		if ic.Options["peer"] == "" {
			return -1, errors.New("patch: missing peer")
		}
	} else {
		dev, err := s.openDevice(b, ic)
		if err != nil {
			return -1, err
		}
		no, err := s.d.Datapath(b.dpTyp).AddPort(dev, dpif.PortNone)
		if err != nil {
			dev.Close()
			return -1, fmt.Errorf("could not add network device %s to ofproto (%v)", ic.Name, err)
		}
		p.dev, p.odp = dev, no
	}
	b.ports[ic.Name] = p
	return p.ofport, nil
}

// allocOfport honours a free requested number, else takes the lowest
// free number from 1, as Open vSwitch does.
func (b *swBridge) allocOfport(req int64) int64 {
	used := map[int64]bool{}
	for _, p := range b.ports {
		used[p.ofport] = true
	}
	if req > 0 && req < 0xff00 && !used[req] {
		return req
	}
	for n := int64(1); ; n++ {
		if !used[n] {
			return n
		}
	}
}

func (s *dpSwitch) DelPort(bname, iface string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.bridges[bname]
	if b == nil {
		return nil
	}
	p := b.ports[iface]
	if p == nil {
		return nil
	}
	delete(b.ports, iface)
	if p.dev != nil {
		s.d.Datapath(b.dpTyp).DelPort(p.odp)
		p.dev.Close()
	}
	return nil
}

func (s *dpSwitch) IfaceStatus(bname, iface string) bridge.IfaceStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.bridges[bname]
	if b == nil || b.ports[iface] == nil {
		return bridge.IfaceStatus{Ofport: -1}
	}
	p := b.ports[iface]
	st := bridge.IfaceStatus{Ofport: p.ofport, AdminState: "up", LinkState: "up", Status: map[string]string{}}
	if p.dev == nil { // patch ports have no device
		return st
	}
	mac := p.dev.MAC()
	st.MACInUse = fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3], mac[4], mac[5])
	st.MTU = int64(p.dev.MTU())
	st.Ifindex = int64(p.dev.Ifindex())
	st.LinkState = p.dev.LinkState().String()
	ns := p.dev.Stats()
	st.Statistics = map[string]int64{
		"rx_packets": int64(ns.RxPackets), "rx_bytes": int64(ns.RxBytes), "rx_dropped": int64(ns.RxDropped), "rx_errors": int64(ns.RxErrors),
		"tx_packets": int64(ns.TxPackets), "tx_bytes": int64(ns.TxBytes), "tx_dropped": int64(ns.TxDropped), "tx_errors": int64(ns.TxErrors),
	}
	return st
}

func (s *dpSwitch) BridgeStatus(bname string) bridge.BridgeStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.bridges[bname]
	if b == nil {
		return bridge.BridgeStatus{}
	}
	return bridge.BridgeStatus{DatapathID: fmt.Sprintf("%016x", b.dpid), DatapathVersion: "<built-in>"}
}
