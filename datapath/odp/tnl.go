package odp

import (
	"errors"
	"strconv"

	"github.com/gvs-project/gvs/datapath/tnl"
)

// TunnelPushParams are tnl_push's arguments, as Open vSwitch's
// ovs_action_push_tnl: the tunnel port whose encapsulation this is, the
// prebuilt outer header, and the port the translator resolved the
// tunnel's route to (printed, not used by the datapath: the output is the
// next action).
type TunnelPushParams struct {
	TnlPort, OutPort uint32
	Header           tnl.Header
}

// TunnelPush returns a tnl_push action over a copy of h.
func TunnelPush(tnlPort, outPort uint32, h tnl.Header) Action {
	return Action{Kind: KindTunnelPush, TunnelPush: &TunnelPushParams{TnlPort: tnlPort, OutPort: outPort, Header: h}}
}

// TunnelPop returns a tnl_pop action for tunnel port port.
func TunnelPop(port uint32) Action { return Action{Kind: KindTunnelPop, Arg: port} }

// appendTunnelPush prints tnl_push as Open vSwitch 3.1:
// tnl_push(tnl_port(P),header(...),out_port(O)).
func appendTunnelPush(dst []byte, t *TunnelPushParams) []byte {
	if t == nil {
		return append(dst, "tnl_push(invalid)"...)
	}
	dst = append(dst, "tnl_push(tnl_port("...)
	dst = strconv.AppendUint(dst, uint64(t.TnlPort), 10)
	dst = append(dst, "),"...)
	dst = tnl.AppendHeaderText(dst, &t.Header)
	dst = append(dst, ",out_port("...)
	dst = strconv.AppendUint(dst, uint64(t.OutPort), 10)
	return append(dst, "))"...)
}

// tnlPush parses what follows "tnl_push".
func (p *parser) tnlPush(int) (Action, error) {
	t := &TunnelPushParams{}
	if err := p.expect("(tnl_port("); err != nil {
		return Action{}, err
	}
	v, err := p.uint(32)
	if err != nil {
		return Action{}, err
	}
	t.TnlPort = uint32(v)
	if err := p.expect("),"); err != nil {
		return Action{}, err
	}
	h, n, err := tnl.ParseHeader(p.s[p.pos:])
	if err != nil {
		var he *tnl.HeaderError
		if errors.As(err, &he) {
			return Action{}, p.errAt(p.pos+he.Offset, "tnl_push: %s", he.Msg)
		}
		return Action{}, p.errAt(p.pos, "tnl_push: %v", err)
	}
	p.pos += n
	t.Header = h
	if err := p.expect(",out_port("); err != nil {
		return Action{}, err
	}
	if v, err = p.uint(32); err != nil {
		return Action{}, err
	}
	t.OutPort = uint32(v)
	if err := p.expect("))"); err != nil {
		return Action{}, err
	}
	return Action{Kind: KindTunnelPush, TunnelPush: t}, nil
}
