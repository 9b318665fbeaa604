package ofprint

// ofp-print of the flow monitor messages, as ovs-ofctl's
// ofputil_flow_monitor_request_format and ofputil_flow_update_format.

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/ofptext"
)

func init() {
	printers[kindOf(&ofp.FlowMonitorRequest{})] = printFlowMonitorRequest
	printers[kindOf(&ofp.FlowMonitorReply{})] = printFlowMonitorReply
	printers[kindOf(&ofp.FlowMonitorCancel{})] = func(w *bufio.Writer, m *ofp.Msg) error {
		header(w, fmName(m, "_FLOW_MONITOR_CANCEL"), m)
		fmt.Fprintf(w, " id=%d\n", m.Body.(*ofp.FlowMonitorCancel).ID)
		return nil
	}
	printers[kindOf(&ofp.FlowMonitorPaused{})] = func(w *bufio.Writer, m *ofp.Msg) error {
		name := "_FLOW_MONITOR_PAUSED"
		if m.Body.(*ofp.FlowMonitorPaused).Resumed {
			name = "_FLOW_MONITOR_RESUMED"
		}
		header(w, fmName(m, name), m)
		w.WriteByte('\n')
		return nil
	}
}

// fmName is the Nicira (OpenFlow 1.0-1.2) or ONF (1.3) message name.
func fmName(m *ofp.Msg, suffix string) string {
	if m.Version == mf.OF13 {
		return "ONFT" + suffix
	}
	return "NXT" + suffix
}

// fmStatsName names a flow monitor request or reply by its form.
func fmStatsName(m *ofp.Msg, what string) string {
	switch {
	case m.Version == mf.OF13:
		return "ONFST_FLOW_MONITOR " + what
	case m.Version >= mf.OF14:
		return "OFPST_FLOW_MONITOR " + what
	}
	return "NXST_FLOW_MONITOR " + what
}

// fmFlagNames name OFPFMF_* bits in bit order.
var fmFlagNames = []string{"initial", "add", "delete", "modify", "actions", "no-abbrev", "own"}

func printFlowMonitorRequest(w *bufio.Writer, m *ofp.Msg) error {
	req := m.Body.(*ofp.FlowMonitorRequest)
	var sb strings.Builder
	for _, fm := range req.Monitors {
		if fm.Command == ofp.FMCDelete {
			fmt.Fprintf(&sb, "\n id=%d command=delete", fm.ID)
			continue
		}
		var names []string
		for i, n := range fmFlagNames {
			if fm.Flags&(1<<i) != 0 {
				names = append(names, n)
			}
		}
		if fm.Flags>>len(fmFlagNames) != 0 {
			return fmt.Errorf("flow monitor flags %#x: %w", fm.Flags, errNotPrinted)
		}
		fmt.Fprintf(&sb, "\n id=%d flags=%s", fm.ID, strings.Join(names, ","))
		if fm.OutPort != ofp.PortAny16 {
			if fm.OutPort >= 0xff00 {
				return fmt.Errorf("flow monitor out_port %#x: %w", fm.OutPort, errNotPrinted)
			}
			fmt.Fprintf(&sb, " out_port=%d", fm.OutPort)
		}
		if fm.OutGroup != 0 && fm.OutGroup != ofp.GroupAny {
			fmt.Fprintf(&sb, " out_group=%d", int32(fm.OutGroup))
		}
		if fm.TableID != 0xff {
			fmt.Fprintf(&sb, " table=%d", fm.TableID)
		}
		if s := ofptext.FormatMatch(&fm.Match, ofptext.DefaultPriority); s != "" {
			sb.WriteString(" " + s)
		}
	}
	header(w, fmStatsName(m, "request"), m)
	printStatsFlags(w, req.Flags, true, m.Version)
	fmt.Fprintf(w, "%s\n", sb.String())
	return nil
}

// fmEventNames name OFPFME_* as ovs-ofctl prints them.
var fmEventNames = []string{"INITIAL", "ADDED", "DELETED", "MODIFIED", "ABBREV", "PAUSED", "RESUMED"}

func printFlowMonitorReply(w *bufio.Writer, m *ofp.Msg) error {
	rep := m.Body.(*ofp.FlowMonitorReply)
	var sb strings.Builder
	for _, u := range rep.Updates {
		if int(u.Event) >= len(fmEventNames) {
			return fmt.Errorf("flow update event %d: %w", u.Event, errNotPrinted)
		}
		fmt.Fprintf(&sb, "\n event=%s", fmEventNames[u.Event])
		switch u.Event {
		case ofp.FMEAbbrev:
			fmt.Fprintf(&sb, " xid=0x%x", u.XID)
			continue
		case ofp.FMEPaused, ofp.FMEResumed:
			continue
		case ofp.FMERemoved:
			reason := fmt.Sprint(u.Reason)
			if int(u.Reason) < len(flowRemovedReasons) {
				reason = flowRemovedReasons[u.Reason]
			}
			fmt.Fprintf(&sb, " reason=%s", reason)
		}
		fmt.Fprintf(&sb, " table=%d", u.TableID)
		if u.IdleTimeout != 0 {
			fmt.Fprintf(&sb, " idle_timeout=%d", u.IdleTimeout)
		}
		if u.HardTimeout != 0 {
			fmt.Fprintf(&sb, " hard_timeout=%d", u.HardTimeout)
		}
		if u.Cookie == 0 {
			sb.WriteString(" cookie=0")
		} else {
			fmt.Fprintf(&sb, " cookie=%#x", u.Cookie)
		}
		sb.WriteString(" " + ofptext.FormatMatch(&u.Match, ofptext.DefaultPriority))
		acts, err := ofp.DecodeOfpacts(u.Actions, m.Version, m.Version >= mf.OF13)
		if err != nil {
			return fmt.Errorf("flow update actions: %w", err)
		}
		if len(acts) > 0 {
			if !strings.HasSuffix(sb.String(), " ") {
				sb.WriteByte(' ')
			}
			sb.WriteString("actions=" + ofptext.FormatActions(acts, m.Version))
		}
	}
	// A long list of updates comes in several replies: flags=[more].
	header(w, fmStatsName(m, "reply"), m)
	printStatsFlags(w, rep.Flags, false, m.Version)
	fmt.Fprintf(w, "%s\n", sb.String())
	return nil
}
