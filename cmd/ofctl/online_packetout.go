package ofctl

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/ofptext"
)

// packetOutCmd is ovs-ofctl 3.1's packet-out: either SWITCH IN_PORT
// ACTIONS PACKET... (one packet-out per packet) or SWITCH "in_port=...
// packet=... actions=...".
func packetOutCmd(e *env, args []string) error {
	switch {
	case len(args) == 2:
		return packetOutKeywords(e, args[0], args[1])
	case len(args) < 4:
		return fmt.Errorf("Too many arguments (%d)", len(args)+1)
	}
	acts, err := ofptext.ParseActionsFor(args[2], &mf.Match{})
	if err != nil {
		return err
	}
	in, err := e.inPortNumber(args[0], args[1])
	if err != nil {
		return err
	}
	c, err := e.open(args[0])
	if err != nil {
		return err
	}
	defer c.close()
	for _, h := range args[3:] {
		data, err := ethFromHex(h)
		if err != nil {
			return err
		}
		if err := e.sendPacketOut(c, in, acts, data); err != nil {
			return err
		}
	}
	return nil
}

// packetOutKeywords sends the packet-out described by s's in_port=,
// packet= and (last) actions= keywords.
func packetOutKeywords(e *env, target, s string) error {
	fields, actText, hasActs := strings.Cut(s, "actions=")
	var acts []ofp.Action
	if hasActs {
		var err error
		if acts, err = ofptext.ParseActionsFor(strings.TrimSpace(actText), &mf.Match{}); err != nil {
			return err
		}
	}
	in := ofp.PortToOF11(ofp.OFPPController)
	var data []byte
	for _, kv := range strings.FieldsFunc(fields, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		k, v, _ := strings.Cut(kv, "=")
		var err error
		switch k {
		case "in_port":
			in, err = e.inPortNumber(target, v)
		case "packet":
			if data, err = ethFromHex(v); err != nil {
				err = fmt.Errorf("packet: %w", err)
			}
		default:
			err = fmt.Errorf("unknown keyword %s", k)
		}
		if err != nil {
			return err
		}
	}
	if data == nil {
		return errors.New("must specify packet")
	}
	c, err := e.open(target)
	if err != nil {
		return err
	}
	defer c.close()
	return e.sendPacketOut(c, in, acts, data)
}

func (e *env) sendPacketOut(c *vconn, in uint32, acts []ofp.Action, data []byte) error {
	raw, err := ofp.AppendOfpacts(nil, acts, c.version, false)
	if err != nil {
		return fmt.Errorf("encoding packet-out actions: %w", err)
	}
	po := &ofp.PacketOut{BufferID: 0xffffffff, InPort: in, Actions: raw, Data: data}
	return e.reportReply(c.transactNoReply(po))
}

// inPortNumber resolves a packet-out input port: a number, a reserved
// name, or one of the switch's port names.
func (e *env) inPortNumber(target, s string) (uint32, error) {
	if p, err := parseOutPort(s); err == nil {
		return p, nil
	}
	ports, err := e.portNames(target)
	if err != nil {
		return 0, err
	}
	for n, name := range ports {
		if name == s {
			return n, nil
		}
	}
	return 0, fmt.Errorf("%s: unknown port `%s'", target, s)
}

// ethFromHex decodes a packet given in hex, as ovs-ofctl's eth_from_hex.
func ethFromHex(s string) ([]byte, error) {
	n := len(s) &^ 1
	i := 0
	for i < n && isHex(s[i]) && isHex(s[i+1]) {
		i += 2
	}
	if i < len(s) {
		return nil, errors.New("Trailing garbage in packet data")
	}
	b, _ := hex.DecodeString(s[:i])
	if len(b) < 14 {
		return nil, errors.New("Packet data too short for Ethernet")
	}
	return b, nil
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
