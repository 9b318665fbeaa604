package conntrack

// otherNew initialises a UDP or other-protocol connection.
func otherNew(c *Conn, p *TimeoutPolicy, now int64) {
	c.setState(othersFirst, p, UDPFirst, now)
}

// otherTimeouts is the timeout class of each UDP/other state (indexed by
// the whole state field: 3 never occurs).
var otherTimeouts = [pstateMask + 1]timeoutClass{othersFirst: UDPFirst, othersMultiple: UDPSingle, othersBidir: UDPMultiple, 3: UDPMultiple}

// otherUpdate advances a UDP or other-protocol connection. It takes no
// lock: the state and the expiry change together in one atomic word.
func otherUpdate(c *Conn, reply bool, p *TimeoutPolicy, now int64) updateResult {
	for {
		old := c.expires.Load()
		st := uint8(old & pstateMask)
		switch {
		case reply && st != othersBidir:
			st = othersBidir
		case st == othersFirst:
			st = othersMultiple
		}
		if !c.casState(old, st, p, otherTimeouts[st&pstateMask], now) {
			continue
		}
		if st == othersBidir {
			return updateValid
		}
		return updateValidNew
	}
}

// ICMP states, as OVS's ICMPS_*.
const (
	icmpsFirst = 0
	icmpsReply = 1
)

func icmpNew(c *Conn, p *TimeoutPolicy, now int64) {
	c.setState(icmpsFirst, p, ICMPFirst, now)
}

// icmpUpdate advances an ICMP query connection, without a lock as
// otherUpdate.
func icmpUpdate(c *Conn, reply bool, p *TimeoutPolicy, now int64) updateResult {
	for {
		old := c.expires.Load()
		st := uint8(old & pstateMask)
		res := updateValid
		if reply && st == icmpsFirst {
			st = icmpsReply
		} else if st == icmpsFirst {
			res = updateValidNew
		}
		tm := ICMPFirst
		if st == icmpsReply {
			tm = ICMPReply
		}
		if c.casState(old, st, p, tm, now) {
			return res
		}
	}
}
