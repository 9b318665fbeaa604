package backer

import (
	"fmt"
	"strconv"

	"github.com/gvs-project/gvs/ofproto/xlate"
)

// The erspan_* options of erspan and ip6erspan ports, read and reported
// as Open vSwitch's set_tunnel_config and get_tunnel_config do.

// ERSPAN field limits: the v1 session index is 20 bits, the v2 hardware
// ID 6 bits.
const (
	erspanIdxMask  = 0xfffff
	erspanHwIDMask = 0x3f
)

// parseERSPAN reads option k=v into e, with Open vSwitch's errors.
func parseERSPAN(e *xlate.ERSPANConfig, name, k, v string) error {
	flow := v == "flow"
	switch k {
	case "erspan_idx":
		e.IdxFlow = flow
		if !flow {
			n, _ := strconv.ParseInt(trimHex(v), 16, 64)
			if n&^erspanIdxMask != 0 {
				return fmt.Errorf("%s: invalid erspan index: %s", name, v)
			}
			e.Idx = uint32(n)
		}
	case "erspan_ver":
		if flow {
			e.VerFlow, e.IdxFlow, e.DirFlow, e.HwIDFlow = true, true, true, true
			break
		}
		e.VerFlow = false
		n, _ := strconv.Atoi(v)
		if n != 1 && n != 2 {
			return fmt.Errorf("%s: invalid erspan version: %s", name, v)
		}
		e.Ver = uint8(n)
	case "erspan_dir":
		e.DirFlow = flow
		if !flow {
			n, _ := strconv.Atoi(v)
			if n != 0 && n != 1 {
				return fmt.Errorf("%s: invalid erspan direction: %s", name, v)
			}
			e.Dir = uint8(n)
		}
	case "erspan_hwid":
		e.HwIDFlow = flow
		if !flow {
			n, _ := strconv.ParseInt(trimHex(v), 16, 64)
			if n&^erspanHwIDMask != 0 {
				return fmt.Errorf("%s: invalid erspan hardware ID: %s", name, v)
			}
			e.HwID = uint8(n)
		}
	}
	return nil
}

// trimHex drops a 0x prefix, as strtol with base 16 accepts it.
func trimHex(s string) string {
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		return s[2:]
	}
	return s
}

// erspanConfigText adds the erspan_* options to m as get_tunnel_config
// reports them: all "flow" when the version is, else the version and
// the fields of that version.
func erspanConfigText(e *xlate.ERSPANConfig, m map[string]string) {
	if e.VerFlow {
		m["erspan_ver"], m["erspan_idx"], m["erspan_dir"], m["erspan_hwid"] = "flow", "flow", "flow", "flow"
		return
	}
	m["erspan_ver"] = strconv.Itoa(int(e.Ver))
	flowOr := func(f bool, s string) string {
		if f {
			return "flow"
		}
		return s
	}
	switch e.Ver {
	case 1:
		m["erspan_idx"] = flowOr(e.IdxFlow, fmt.Sprintf("0x%x", e.Idx))
	case 2:
		m["erspan_dir"] = flowOr(e.DirFlow, strconv.Itoa(int(e.Dir)))
		m["erspan_hwid"] = flowOr(e.HwIDFlow, fmt.Sprintf("0x%x", e.HwID))
	}
}
