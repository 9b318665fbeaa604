package ofptext

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/ofproto/ofp"
)

// encap and decap stay raw actions (their wire bytes) in ofp; this file
// turns them into text and back, as ovs-ofctl writes them:
//
//	encap(ethernet|mpls|mpls_mc|nsh[(md_type=N,tlv(CLASS,TYPE,0xVALUE)...)])
//	decap([packet_type(ns=N,type=T)])

func init() {
	registerParsers(map[string]actionParser{
		"encap": single(parseEncap),
		"decap": single(parseDecap),
	})
	registerFormatters(map[ofp.ActionType]actionFormatter{
		ofp.ActRaw: formatRaw,
	})
}

// formatRaw prints encap and decap in their syntax and any other raw
// action (sample with a field-sourced domain) as "<raw action name>".
func formatRaw(sb *strings.Builder, a *ofp.Action, _ uint8) {
	if (a.Raw == ofp.RawActNXAST_ENCAP || a.Raw == ofp.RawActNXAST_DECAP) && formatEncapDecap(sb, a) {
		return
	}
	fmt.Fprintf(sb, "<%s>", a.Raw)
}

const (
	nxVendor       = 0x2320
	nxastEncap     = 46
	nxastDecap     = 47
	edPropClassNSH = 4 // OFPPPC_NSH
	nshPropMDType  = 1 // NXENCAP_PROP_NSH_MD_TYPE
	nshPropTLV     = 2 // NXENCAP_PROP_NSH_TLV
	// ptUseNextProto is decap's default packet type: (0,0xfffe), "use the
	// next protocol field of the removed header".
	ptUseNextProto = 0xfffe
)

// encapHeaders are encap's header names and the packet types they give.
var encapHeaders = []struct {
	name string
	pt   uint32
}{{"ethernet", 0}, {"nsh", 1<<16 | 0x894f}, {"mpls", 1<<16 | 0x8847}, {"mpls_mc", 1<<16 | 0x8848}}

// nxRawAction frames an NXAST action: header, subtype, then body, padded
// to a multiple of 8.
func nxRawAction(raw ofp.RawAction, subtype uint16, body []byte) ofp.Action {
	b := make([]byte, 10, 10+len(body)+7)
	binary.BigEndian.PutUint16(b, 0xffff)
	binary.BigEndian.PutUint32(b[4:], nxVendor)
	binary.BigEndian.PutUint16(b[8:], subtype)
	b = append(b, body...)
	for len(b)%8 != 0 {
		b = append(b, 0)
	}
	binary.BigEndian.PutUint16(b[2:], uint16(len(b)))
	return ofp.Action{Type: ofp.ActRaw, Raw: raw, Body: b}
}

func parseEncap(arg string) (ofp.Action, error) {
	name, inner, hasArgs := strings.Cut(arg, "(")
	pt, found := uint32(0), false
	for _, h := range encapHeaders {
		if h.name == name {
			pt, found = h.pt, true
		}
	}
	if !found {
		return ofp.Action{}, errf("Encap hdr not supported: %s", inner)
	}
	body := binary.BigEndian.AppendUint16(nil, 0) // hdr_size: not specified
	body = binary.BigEndian.AppendUint32(body, pt)
	if hasArgs {
		if name != "nsh" {
			return ofp.Action{}, errf("Invalid encap prop class: %s", name)
		}
		inner, ok := strings.CutSuffix(inner, ")")
		if !ok {
			return ofp.Action{}, errf("%s: unbalanced parentheses", arg)
		}
		items, err := splitTop(inner)
		if err != nil {
			return ofp.Action{}, err
		}
		for _, it := range items {
			k, v, _ := strings.Cut(it, "=")
			switch {
			case k == "md_type":
				n, err := strconv.ParseUint(v, 0, 8)
				if err != nil {
					return ofp.Action{}, errf("invalid md_type \"%s\"", v)
				}
				// Length 5 (header and md_type), padded to 8.
				body = append(body, 0, edPropClassNSH, nshPropMDType, 5, byte(n), 0, 0, 0)
			case strings.HasPrefix(it, "tlv(") && strings.HasSuffix(it, ")"):
				f := strings.Split(it[4:len(it)-1], ",")
				if len(f) != 3 {
					return ofp.Action{}, errf("invalid NSH TLV %s", it)
				}
				class, err1 := strconv.ParseUint(f[0], 0, 16)
				typ, err2 := strconv.ParseUint(f[1], 0, 8)
				h, ok := strings.CutPrefix(f[2], "0x")
				if len(h)%2 != 0 {
					h = "0" + h
				}
				val, err3 := hex.DecodeString(h)
				if err1 != nil || err2 != nil || err3 != nil || !ok {
					return ofp.Action{}, errf("invalid NSH TLV %s", it)
				}
				plen := (8 + len(val) + 7) / 8 * 8 // the padded length, as ovs-ofctl writes it
				p := []byte{0, edPropClassNSH, nshPropTLV, byte(plen)}
				p = binary.BigEndian.AppendUint16(p, uint16(class))
				p = append(p, byte(typ), byte(len(val)))
				p = append(p, val...)
				body = append(body, p...)
				for len(body)%8 != 6 { // props start 6 bytes into the body
					body = append(body, 0)
				}
			default:
				return ofp.Action{}, errf("Invalid NSH property: %s", it)
			}
		}
	}
	return nxRawAction(ofp.RawActNXAST_ENCAP, nxastEncap, body), nil
}

func parseDecap(arg string) (ofp.Action, error) {
	pt := uint32(ptUseNextProto)
	if arg != "" {
		inner, ok := strings.CutPrefix(arg, "packet_type(")
		inner, ok2 := strings.CutSuffix(inner, ")")
		if !ok || !ok2 {
			return ofp.Action{}, errf("Invalid decap argument: %s", arg)
		}
		var ns, typ uint64
		for _, it := range strings.Split(inner, ",") {
			k, v, _ := strings.Cut(it, "=")
			n, err := strconv.ParseUint(v, 0, 16)
			if err != nil || k != "ns" && k != "type" {
				return ofp.Action{}, errf("Invalid decap argument: %s", arg)
			}
			if k == "ns" {
				ns = n
			} else {
				typ = n
			}
		}
		pt = uint32(ns)<<16 | uint32(typ)
	}
	body := binary.BigEndian.AppendUint16(nil, 0)
	body = binary.BigEndian.AppendUint32(body, pt)
	return nxRawAction(ofp.RawActNXAST_DECAP, nxastDecap, body), nil
}

// formatEncapDecap prints a raw encap or decap action; ok is false for
// bytes it does not understand.
func formatEncapDecap(sb *strings.Builder, a *ofp.Action) bool {
	d := a.Data()
	if len(d) < 16 {
		return false
	}
	pt := binary.BigEndian.Uint32(d[12:])
	if a.Raw == ofp.RawActNXAST_DECAP {
		if pt == ptUseNextProto {
			sb.WriteString("decap()")
		} else {
			typ := "0" // "%#x": no 0x for zero
			if pt&0xffff != 0 {
				typ = fmt.Sprintf("%#x", pt&0xffff)
			}
			fmt.Fprintf(sb, "decap(packet_type(ns=%d,type=%s))", pt>>16, typ)
		}
		return true
	}
	name := ""
	for _, h := range encapHeaders {
		if h.pt == pt {
			name = h.name
		}
	}
	if name == "" {
		return false
	}
	var props []string
	for p := d[16:]; len(p) >= 4; {
		class, typ, n := binary.BigEndian.Uint16(p), p[2], int(p[3])
		if n < 4 || n > len(p) || class != edPropClassNSH {
			return false
		}
		switch {
		case typ == nshPropMDType && n >= 5:
			props = append(props, "md_type="+strconv.Itoa(int(p[4])))
		case typ == nshPropTLV && n >= 8 && 8+int(p[7]) <= n:
			props = append(props, fmt.Sprintf("tlv(0x%04x,%d,0x%x)", binary.BigEndian.Uint16(p[4:]), p[6], p[8:8+int(p[7])]))
		default:
			return false
		}
		n = (n + 7) / 8 * 8
		if n > len(p) {
			break
		}
		p = p[n:]
	}
	sb.WriteString("encap(" + name)
	if len(props) > 0 {
		sb.WriteString("(" + strings.Join(props, ",") + ")")
	}
	sb.WriteByte(')')
	return true
}
