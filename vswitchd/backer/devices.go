package backer

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/gvs-project/gvs/datapath/netdev"
	"github.com/gvs-project/gvs/datapath/netdev/afpacket"
	"github.com/gvs-project/gvs/datapath/netdev/afxdp"
	"github.com/gvs-project/gvs/datapath/netdev/dummy"
	"github.com/gvs-project/gvs/datapath/netdev/tap"
	"github.com/gvs-project/gvs/ovsdb/bridge"
)

// devices opens the interfaces' network devices by type, as Open
// vSwitch's netdev providers do under its test modes (Config's
// DisableSystem, DummySystem and DummyOverride): in-memory dummies,
// AF_PACKET for system interfaces, tap for internal ones. Dummy devices
// take their MACs from the datapath set's counter.
type devices struct {
	disableSystem, dummySystem, dummyOverride bool
	// runDir resolves dummy streams' relative unix paths.
	runDir string
	logger func(module string) *slog.Logger
	dps    *datapathSet
}

// kernel reports whether open gives the interface a Linux
// network device (AF_PACKET or tap) rather than an in-memory one.
func (d *devices) kernel(b *dpBridge, ic *bridge.IfaceConfig) bool {
	t := d.devType(b, ic)
	return t == "system" || t == "internal" || t == afxdp.Type
}

// devType is the device an interface gets, as Open vSwitch's netdev and
// dpif providers decide under its test modes: "dummy" (in-memory),
// "system" (AF_PACKET), "internal" (tap), "afxdp" (AF_XDP), "refused" (the kernel datapath
// type is disabled), or another type for open to refuse.
func (d *devices) devType(b *dpBridge, ic *bridge.IfaceConfig) string {
	typ := ic.Type
	if typ == "" {
		typ = "system"
	}
	if typ == afxdp.Type && d.dummyOverride {
		// --enable-dummy=override replaces every netdev type Open
		// vSwitch registered, afxdp among them, with the dummy.
		return "dummy"
	}
	if typ != "system" && typ != "internal" {
		return typ
	}
	kernelBridge := b.cfgType == "system" // the kernel datapath type
	switch {
	case d.dummyOverride, b.dpTyp == "dummy" && typ == "internal":
		return "dummy"
	case d.dummySystem && (typ == "system" || kernelBridge):
		// The "system" netdev type is a dummy, and so is the system
		// datapath, whose internal ports are dummy-internal.
		return "dummy"
	case d.disableSystem && kernelBridge:
		if typ == "internal" {
			return "dummy"
		}
		return "refused"
	}
	return typ
}

// open opens an interface's device by type, as Open vSwitch's
// netdev providers do.
func (d *devices) open(b *dpBridge, ic *bridge.IfaceConfig) (netdev.Device, error) {
	switch typ := d.devType(b, ic); typ {
	case "dummy", dummy.TypePMD:
		mac := b.localDummyMAC
		if ic.Name != b.name || ic.Type != "internal" || mac == ([6]byte{}) {
			mac = d.dps.nextDummyMAC()
		}
		cfg := dummy.Config{Name: ic.Name, Internal: ic.Type == "internal", MAC: mac, MTU: int(ic.MTURequest), Pcap: ic.Options["pcap"], RxqPcap: ic.Options["rxq_pcap"], TxPcap: ic.Options["tx_pcap"]}
		if typ == dummy.TypePMD {
			d.pmdDummyConfig(&cfg, ic.Options) // pmd.go
		}
		dev, err := dummy.New(cfg)
		if err != nil {
			return nil, err
		}
		// Streams join this port to dummy ports of other switches; a
		// stream that cannot open is logged and the port stays, as
		// netdev-dummy does. Relative unix paths are under the run
		// directory, as Open vSwitch resolves them.
		if err := dev.SetStreams(ic.Options["pstream"], ic.Options["stream"], d.runDir); err != nil {
			d.logger("netdev_dummy").Warn(strings.TrimSuffix(err.Error(), ": "+dummy.ErrBothStreams.Error()))
		}
		return dev, nil
	case "refused":
		return nil, fmt.Errorf("could not open network device %s (Address family not supported by protocol)", ic.Name)
	case "system":
		// options:n_rxq spreads the port's traffic over as many
		// AF_PACKET sockets in a fanout group (by flow hash), which the
		// PMD threads poll as separate rx queues (pmd.go).
		dev, err := afpacket.Open(afpacket.Config{Name: ic.Name, RxQueues: systemRxQueues(ic.Options)})
		if err != nil {
			return nil, fmt.Errorf("could not open network device %s (No such device)", ic.Name)
		}
		return dev, nil
	case afxdp.Type:
		// AF_XDP sockets on the interface's first n_rxq queues
		// (afxdp.go).
		dev, err := d.openAFXDP(ic.Name, ic.Options)
		if err != nil {
			return nil, err
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

// dpTypeNames are the datapath types this switch offers, as
// Open_vSwitch.datapath_types lists them ("ovs-TYPE" is a reserved
// interface name): dummy and netdev, and system unless --disable-system.
func (c *Config) dpTypeNames() []string {
	if c.DisableSystem {
		return []string{"dummy", "netdev"}
	}
	return []string{"dummy", "netdev", "system"}
}
