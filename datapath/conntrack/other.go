package conntrack

// otherNew initialises a UDP or other-protocol connection.
func otherNew(c *Conn, p *TimeoutPolicy, now int64) {
	c.pstate = othersFirst
	c.setExpiry(p, UDPFirst, now)
}

// otherUpdate advances a UDP or other-protocol connection.
//
// Preconditions: c.mu is held.
func otherUpdate(c *Conn, reply bool, p *TimeoutPolicy, now int64) updateResult {
	switch {
	case reply && c.pstate != othersBidir:
		c.pstate = othersBidir
	case c.pstate == othersFirst:
		c.pstate = othersMultiple
	}
	tm := [...]timeoutClass{othersFirst: UDPFirst, othersMultiple: UDPSingle, othersBidir: UDPMultiple}[c.pstate]
	c.setExpiry(p, tm, now)
	if c.pstate == othersBidir {
		return updateValid
	}
	return updateValidNew
}

// ICMP states, as OVS's ICMPS_*.
const (
	icmpsFirst = 0
	icmpsReply = 1
)

func icmpNew(c *Conn, p *TimeoutPolicy, now int64) {
	c.pstate = icmpsFirst
	c.setExpiry(p, ICMPFirst, now)
}

// icmpUpdate advances an ICMP query connection.
//
// Preconditions: c.mu is held.
func icmpUpdate(c *Conn, reply bool, p *TimeoutPolicy, now int64) updateResult {
	res := updateValid
	if reply && c.pstate == icmpsFirst {
		c.pstate = icmpsReply
	} else if c.pstate == icmpsFirst {
		res = updateValidNew
	}
	tm := ICMPFirst
	if c.pstate == icmpsReply {
		tm = ICMPReply
	}
	c.setExpiry(p, tm, now)
	return res
}
