package vswitchd

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/gvs-project/gvs/ofproto/ofconn"
	"github.com/gvs-project/gvs/ofproto/ofprint"
)

// vconnLog is Open vSwitch's vconn debug log: with `vlog/set vconn:dbg`
// every OpenFlow message a bridge sends or receives is logged, printed
// as ovs-ofctl prints it (ofp_to_string at verbosity 1), with the
// connection's name and the version negotiation, in vconn.c's words.
type vconnLog struct{ log *slog.Logger }

var _ ofconn.Debugger = vconnLog{}

func (v vconnLog) Enabled() bool { return v.log.Enabled(context.Background(), slog.LevelDebug) }

func (v vconnLog) Message(name string, sent bool, b []byte) {
	text := strings.TrimRight(ofprint.FormatMessage(b, 1), "\n")
	if sent {
		v.log.Debug(name + ": sent (Success): " + text)
		return
	}
	v.log.Debug(name + ": received: " + text)
}

func (v vconnLog) Negotiated(name string, version uint8, local, peer string) {
	v.log.Debug(fmt.Sprintf("%s: negotiated OpenFlow version 0x%02x (we support %s, peer supports %s)", name, version, local, peer))
}
