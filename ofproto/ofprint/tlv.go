package ofprint

import (
	"bufio"
	"fmt"

	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/ofptext"
)

func init() {
	printers[kindOf(&ofp.TLVTableMod{})] = func(w *bufio.Writer, m *ofp.Msg) error {
		header(w, "NXT_TLV_TABLE_MOD", m)
		w.WriteString(ofptext.FormatTLVTableMod(m.Body.(*ofp.TLVTableMod)))
		return nil
	}
	printers[kindOf(&ofp.TLVTableRequest{})] = headerOnly("NXT_TLV_TABLE_REQUEST")
	printers[kindOf(&ofp.TLVTableReply{})] = TLVTableReply
}

// TLVTableReply prints an NXT_TLV_TABLE_REPLY.
func TLVTableReply(w *bufio.Writer, m *ofp.Msg) error {
	r, ok := m.Body.(*ofp.TLVTableReply)
	if !ok {
		return fmt.Errorf("unexpected reply %s", m.Raw)
	}
	header(w, "NXT_TLV_TABLE_REPLY", m)
	w.WriteString(ofptext.FormatTLVTableReply(r))
	return nil
}
