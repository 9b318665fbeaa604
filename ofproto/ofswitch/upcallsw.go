package ofswitch

import (
	"errors"
	"time"

	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/oftable"
	"github.com/gvs-project/gvs/ofproto/upcall"
	"github.com/gvs-project/gvs/ofproto/xlate"
)

// upcallSwitch is the bridge as its upcall handler sees it
// (upcall.Switch): the packet-ins, learned flows, BFD and flow export
// work that translations of datapath upcalls leave to the switch.
type upcallSwitch struct{ b *Bridge }

var _ upcall.Switch = upcallSwitch{}

func (s upcallSwitch) SendPacketIns(pis []xlate.PacketIn) { s.b.notify.sendPacketIns(pis) }

func (s upcallSwitch) ApplyFlowMods(fms []*oftable.FlowMod) error { return s.b.applyFlowMods(fms) }

func (s upcallSwitch) SlowPath(u *dpif.Upcall) { s.b.exec.slowPath(u) }

func (s upcallSwitch) Sample(u *dpif.Upcall) bool { return s.b.fe.sampleUpcall(u) }

func (s upcallSwitch) NetFlowAccount(key *flow.Key, out uint16, packets, bytes uint64, tcpFlags uint16, used time.Time) {
	s.b.fe.netflowAccount(key, out, packets, bytes, tcpFlags, used)
}

func (s upcallSwitch) NetFlowExpire(key *flow.Key) { s.b.fe.netflowExpire(key) }

// xlateWarn returns the upcall handler's XlateWarn: Open vSwitch's
// "ERROR on bridge B while processing FLOW" (xlate_report_error), the
// flow as the packet came in, and for a recursion too deep or too many
// resubmits the whole trace of the packet, as its upcall handler logs
// it; nil without Config.ModuleWarnf.
func (b *Bridge) xlateWarn() func(*flow.Key, error) {
	warnf := b.cfg.ModuleWarnf
	if warnf == nil {
		return nil
	}
	return func(key *flow.Key, err error) {
		fl := mf.Flow{Key: *key}
		fl.InPort = uint32(xlate.PortNone)
		snap := b.xl.Snapshot()
		if p := snap.ByODP[key.InPort]; p != nil {
			fl.InPort = uint32(p.OFPort)
		} else if p := snap.TunnelReceive(key); p != nil {
			fl.InPort = uint32(p.OFPort)
		}
		warnf("ofproto_dpif_xlate", "%s on bridge %s while processing %s", xlate.LogText(err), b.cfg.Name, flowString(&fl))
		if errors.Is(err, xlate.ErrTooDeep) || errors.Is(err, xlate.ErrTooManyResubs) {
			k := *key
			warnf("ofproto_dpif_upcall", "%s", b.tracer.trace(TraceInput{ODPKey: &k}))
		}
	}
}
