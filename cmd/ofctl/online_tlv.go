package ofctl

import (
	"fmt"

	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/ofprint"
	"github.com/gvs-project/gvs/ofproto/ofptext"
)

// Geneve TLV option mappings (tun_metadata fields): add-tlv-map,
// del-tlv-map and dump-tlv-map, and the printing of their messages.

// tlvCommands are the TLV map rows of the command table.
func tlvCommands() []command {
	return []command{
		{name: "add-tlv-map", args: "SWITCH MAP", help: "add TLV option MAPpings", min: 2, max: 2, online: true, run: addTLVMapCmd},
		{name: "del-tlv-map", args: "SWITCH [MAP]", help: "delete TLV option MAPpings", min: 1, max: 2, online: true, run: delTLVMapCmd},
		{name: "dump-tlv-map", args: "SWITCH", help: "print TLV option mappings", min: 1, max: 1, online: true, run: dumpTLVMapCmd},
	}
}

func addTLVMapCmd(e *env, args []string) error {
	return tlvModCmd(e, args[0], args[1], ofp.TLVAdd)
}

// delTLVMapCmd deletes the mappings MAP names (by field index), or all
// of them without MAP.
func delTLVMapCmd(e *env, args []string) error {
	if len(args) > 1 {
		return tlvModCmd(e, args[0], args[1], ofp.TLVDelete)
	}
	return tlvModCmd(e, args[0], "", ofp.TLVClear)
}

// tlvModCmd sends one NXT_TLV_TABLE_MOD as ovs-ofctl does: the map is
// parsed before connecting; the message needs NXM or OXM, so an OpenFlow
// 1.0 connection first switches to NXM (a set-flow-format and a barrier)
// and OpenFlow 1.1 cannot carry it; a barrier follows, and an error reply
// is printed to stderr.
func tlvModCmd(e *env, target, text string, command uint16) error {
	maps, err := ofptext.ParseTLVMaps(text)
	if err != nil {
		return err
	}
	// As ovs-ofctl's open_vconn_for_flow_mod, refuse before connecting
	// when no allowed version can carry the message.
	if allowed := allowedProtocols(e.allowedVersions()); allowed&protoNeedsNXM == 0 {
		return fmt.Errorf("none of the usable flow formats (%s) is among the allowed flow formats (%s)", protoNeedsNXM, allowed)
	}
	c, err := e.open(target)
	if err != nil {
		return err
	}
	defer c.close()
	if _, err := c.setFlowModProtocol(protoNeedsNXM); err != nil {
		return e.reportReply(err)
	}
	return e.reportReply(c.transactNoReply(&ofp.TLVTableMod{Command: command, Mappings: maps}))
}

// dumpTLVMapCmd prints the switch's mappings; like ovs-ofctl's
// dump_trivial_transaction it prints an error reply to stdout.
func dumpTLVMapCmd(e *env, args []string) error {
	c, err := e.open(args[0])
	if err != nil {
		return err
	}
	defer c.close()
	return e.dumpTransaction(c, &ofp.TLVTableRequest{}, ofprint.TLVTableReply)
}
