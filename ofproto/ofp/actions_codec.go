package ofp

// Helpers the action families' codecs share: scalar-argument actions,
// reserved ports, zero padding and name tables.

// hdrLen is the size of an action's header before its body: 4 bytes for
// a standard action, 10 for a vendor one.
func hdrLen(in *actionInstance) int {
	if in.vendor == 0 {
		return 4
	}
	return 10
}

func getUintN(p []byte) uint64 {
	var v uint64
	for _, c := range p {
		v = v<<8 | uint64(c)
	}
	return v
}

func appendUintN(b []byte, v uint64, n int) []byte {
	for i := n - 1; i >= 0; i-- {
		b = append(b, byte(v>>(8*i)))
	}
	return b
}

func decodeScalar(p []byte, _ uint8, in *actionInstance, _ int) (Action, error) {
	k := rawOpsOf(in.raw)
	a := Action{Type: k.kind}
	if in.argLen > 0 {
		a.Arg = getUintN(p[in.argOfs : in.argOfs+in.argLen])
	}
	if k.max != 0 && a.Arg > k.max {
		return a, errorf(OFPBAC_BAD_ARGUMENT, "%s argument %#x exceeds %#x", in.raw, a.Arg, k.max)
	}
	if k.post != nil {
		if err := k.post(&a, in.raw); err != nil {
			return a, err
		}
	}
	return a, nil
}

func encodeScalar(b []byte, a *Action, _ uint8, in *actionInstance, _ int) ([]byte, error) {
	if in.argLen == 0 {
		return b, nil
	}
	if in.argLen < 8 && a.Arg>>(8*in.argLen) != 0 {
		return b, errorf(OFPBAC_BAD_ARGUMENT, "%s argument %#x does not fit %d bytes", in.raw, a.Arg, in.argLen)
	}
	b = appendZeros(b, in.argOfs-hdrLen(in))
	return appendUintN(b, a.Arg, in.argLen), nil
}

// Reserved ports (ofp_port_t, 16-bit) and the OpenFlow 1.1+ offset.
const (
	PortMax        = 0xff00
	PortInPort     = 0xfff8
	PortTable      = 0xfff9
	PortNormal     = 0xfffa
	PortFlood      = 0xfffb
	PortAll        = 0xfffc
	PortController = 0xfffd
	PortLocal      = 0xfffe
	PortNone       = 0xffff
	port11Offset   = 0xffff0000
)

// checkOutputPort accepts ports below maxPorts and the reserved ports an
// action may output to (OFPBAC_BAD_OUT_PORT otherwise).
func checkOutputPort(port uint32, maxPorts uint32) error {
	if port < maxPorts {
		return nil
	}
	switch port {
	case PortInPort, PortTable, PortNormal, PortFlood, PortAll, PortController, PortLocal:
		return nil
	}
	return errorf(OFPBAC_BAD_OUT_PORT, "output to port %#x", port)
}

// portFrom11 converts an OpenFlow 1.1+ 32-bit port to its 16-bit form.
func portFrom11(p uint32) (uint32, error) {
	switch {
	case p < PortMax:
		return p, nil
	case p >= port11Offset+PortMax:
		return p - port11Offset, nil
	}
	return 0, errorf(OFPBAC_BAD_OUT_PORT, "port %#x is outside the supported range", p)
}

func portTo11(p uint32) uint32 {
	if p >= PortMax {
		return p + port11Offset
	}
	return p
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

func nameAt(names []string, v uint16) string {
	if int(v) < len(names) {
		return names[v]
	}
	return ""
}

func indexOf(names []string, s string) (uint16, bool) {
	for i, n := range names {
		if n == s {
			return uint16(i), true
		}
	}
	return 0, false
}
