package conntrack

// TCP tracking follows the userspace conntrack of Open vSwitch, which
// took it from OpenBSD's pf: each side keeps the highest sequence number
// sent (seqlo), the highest the other side allows (seqhi), its largest
// window and its window scale; a segment must fall inside those bounds.

// TCP peer states as Open vSwitch's CT_DPIF_TCPS_*.
const (
	tcpsClosed uint8 = iota
	tcpsListen
	tcpsSynSent
	tcpsSynRecv
	tcpsEstablished
	tcpsCloseWait
	tcpsFinWait1
	tcpsClosing
	tcpsLastAck
	tcpsFinWait2
	tcpsTimeWait
)

var tcpStateNames = [...]string{
	"CLOSED", "LISTEN", "SYN_SENT", "SYN_RECV", "ESTABLISHED", "CLOSE_WAIT",
	"FIN_WAIT_1", "CLOSING", "LAST_ACK", "FIN_WAIT_2", "TIME_WAIT",
}

const (
	wscaleFlag    = 0x80 // the window scale option was seen
	wscaleUnknown = 0x40 // picked up mid-stream: scale unknown
	wscaleMask    = 0x0f
	tcpMaxWScale  = 14
	maxAckWindow  = 0xffff + 1500
)

type tcpPeer struct {
	seqlo, seqhi uint32
	maxWin       uint32
	wscale       uint8
	state        uint8
}

// updateResult is a protocol update's verdict, as OVS's ct_update_res.
type updateResult uint8

const (
	updateInvalid  updateResult = iota // +inv
	updateValid                        // +est
	updateValidNew                     // +new (no reply seen yet)
	updateNew                          // the old connection is over: start a new one
)

func seqGT(a, b uint32) bool  { return int32(a-b) > 0 }
func seqGEQ(a, b uint32) bool { return int32(a-b) >= 0 }

// tcpInvalidFlags reports flag combinations no TCP sends.
func tcpInvalidFlags(f uint16) bool {
	if f&tcpSYN != 0 {
		return f&(tcpRST|tcpFIN) != 0
	}
	// Without SYN, every segment but a bare RST carries ACK.
	if f&tcpACK == 0 && f&tcpRST == 0 {
		return true
	}
	return false
}

// tcpValidNew says the segment may open a connection: a SYN, or a
// mid-stream segment (pick-up), but not a SYN-ACK.
func tcpValidNew(pi *pktInfo) bool {
	f := pi.tcpFlags
	if tcpInvalidFlags(f) {
		return false
	}
	return !(f&tcpSYN != 0 && f&tcpACK != 0)
}

func tcpWScaleBits(pi *pktInfo) uint8 {
	if pi.wscale < 0 {
		return 0
	}
	return uint8(pi.wscale) | wscaleFlag
}

// tcpNew initialises a connection from its first segment.
//
// Preconditions: c.mu is held or c is not yet published.
func tcpNew(c *Conn, pi *pktInfo, p *TimeoutPolicy, now int64) {
	src, dst := &c.tcp[0], &c.tcp[1]
	src.seqlo = pi.seq
	src.seqhi = pi.seq + pi.dataLen + 1
	if pi.tcpFlags&tcpSYN != 0 {
		src.seqhi++
		src.wscale = tcpWScaleBits(pi)
	} else {
		src.wscale = wscaleUnknown
		dst.wscale = wscaleUnknown
	}
	src.maxWin = max(uint32(pi.win), 1)
	if src.wscale&wscaleMask != 0 {
		// The window of a SYN is never scaled; undo it as pf does.
		s := src.wscale & wscaleMask
		src.maxWin = max(src.maxWin>>s+boolU32(src.maxWin&(1<<s-1) != 0), 1)
	}
	if pi.tcpFlags&tcpFIN != 0 {
		src.seqhi++
	}
	dst.seqhi, dst.maxWin = 1, 1
	src.state, dst.state = tcpsSynSent, tcpsClosed
	c.setExpiry(p, TCPSynSent, now)
}

func boolU32(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// tcpUpdate runs one segment of an existing connection through the state
// machine. liberal skips the sequence window check.
//
// Preconditions: c.mu is held.
func tcpUpdate(c *Conn, pi *pktInfo, reply bool, liberal bool, p *TimeoutPolicy, now int64) updateResult {
	srcI, dstI := 0, 1
	if reply {
		srcI, dstI = 1, 0
	}
	src, dst := &c.tcp[srcI], &c.tcp[dstI]
	f := pi.tcpFlags
	if tcpInvalidFlags(f) {
		return updateInvalid
	}
	if f&(tcpSYN|tcpACK) == tcpSYN {
		if src.state >= tcpsFinWait2 && dst.state >= tcpsFinWait2 {
			src.state, dst.state = tcpsClosed, tcpsClosed
			return updateNew
		}
		if src.state <= tcpsSynSent {
			// A retransmitted SYN, or the same SYN through a second
			// ct() (OVN's gateway router runs three in one zone):
			// it must not touch the windows, or the SYN-ACK can fall
			// outside them, as Open vSwitch's tcp_conn_update.
			src.state = tcpsSynSent
			c.setExpiry(p, TCPSynSent, now)
			return updateValidNew
		}
	}
	var sws, dws uint8
	if src.wscale&dst.wscale&wscaleFlag != 0 && f&tcpSYN == 0 {
		sws, dws = src.wscale&wscaleMask, dst.wscale&wscaleMask
	} else if src.wscale&dst.wscale&wscaleUnknown != 0 && f&tcpSYN == 0 {
		sws, dws = tcpMaxWScale, tcpMaxWScale
	}
	win := uint32(pi.win)
	seq, ack := pi.seq, pi.ack
	origSeq := seq
	var end uint32
	checkAckskew := true
	if src.state < tcpsSynSent {
		// First segment from this side (the SYN-ACK, or a pick-up).
		end = seq + pi.dataLen
		if f&tcpSYN != 0 {
			end++
			if dst.wscale&wscaleFlag != 0 {
				src.wscale = tcpWScaleBits(pi)
				if src.wscale&wscaleFlag != 0 {
					sws = src.wscale & wscaleMask
					win = (win + 1<<sws - 1) >> sws
					dws = dst.wscale & wscaleMask
				} else {
					// The peer does not scale: neither side does.
					dst.maxWin <<= dst.wscale & wscaleMask
					dst.wscale = 0
				}
			}
		}
		if f&tcpFIN != 0 {
			end++
		}
		src.seqlo = seq
		src.state = tcpsSynSent
		if src.seqhi == 1 || seqGEQ(end+max(1, dst.maxWin<<dws), src.seqhi) {
			src.seqhi = end + max(1, dst.maxWin<<dws)
			// A new connection or one picked up mid-stream: its acks
			// are not checked against what was seen.
			checkAckskew = false
		}
		if win > src.maxWin {
			src.maxWin = win
		}
	} else {
		end = seq + pi.dataLen
		if f&tcpSYN != 0 {
			end++
		}
		if f&tcpFIN != 0 {
			end++
		}
	}
	if f&tcpACK == 0 {
		ack = dst.seqlo
	} else if ack == 0 && f&(tcpACK|tcpRST) == tcpACK|tcpRST {
		ack = dst.seqlo
	}
	if seq == end {
		// No data: ease the sequence checks, as pf.
		seq = src.seqlo
		end = seq
	}
	var ackskew int32
	if checkAckskew {
		ackskew = int32(dst.seqlo - ack)
	}
	inWindow := seqGEQ(src.seqhi, end) &&
		seqGEQ(seq, src.seqlo-dst.maxWin<<dws) &&
		ackskew >= -maxAckWindow && ackskew <= maxAckWindow<<sws &&
		(f&tcpRST == 0 || origSeq == src.seqlo || origSeq == src.seqlo+1 || origSeq+1 == src.seqlo)
	switch {
	case inWindow || liberal:
		if src.maxWin < win {
			src.maxWin = win
		}
		if seqGT(end, src.seqlo) {
			src.seqlo = end
		}
		if seqGEQ(ack+win<<sws, dst.seqhi) {
			dst.seqhi = ack + max(win<<sws, 1)
		}
		if f&tcpSYN != 0 && src.state < tcpsSynSent {
			src.state = tcpsSynSent
		}
		if f&tcpFIN != 0 && src.state < tcpsClosing {
			src.state = tcpsClosing
		}
		if f&tcpACK != 0 {
			if dst.state == tcpsSynSent {
				dst.state = tcpsEstablished
			} else if dst.state == tcpsClosing {
				dst.state = tcpsFinWait2
			}
		}
		if f&tcpRST != 0 {
			src.state, dst.state = tcpsTimeWait, tcpsTimeWait
		}
	case (dst.state < tcpsSynSent || dst.state >= tcpsFinWait2 || src.state >= tcpsFinWait2) &&
		seqGEQ(src.seqhi+maxAckWindow, end) && seqGEQ(seq, src.seqlo-maxAckWindow):
		// Loose tracking while one side is not (or no longer) open.
		if src.maxWin < win {
			src.maxWin = win
		}
		if seqGT(end, src.seqlo) {
			src.seqlo = end
		}
		if seqGEQ(ack+win<<sws, dst.seqhi) {
			dst.seqhi = ack + max(win<<sws, 1)
		}
		if f&tcpFIN != 0 && src.state < tcpsClosing {
			src.state = tcpsClosing
		}
		if f&tcpRST != 0 {
			src.state, dst.state = tcpsTimeWait, tcpsTimeWait
		}
	default:
		return updateInvalid
	}
	switch {
	case src.state >= tcpsFinWait2 && dst.state >= tcpsFinWait2:
		c.setExpiry(p, TCPClose, now)
	case src.state >= tcpsClosing && dst.state >= tcpsClosing:
		c.setExpiry(p, TCPTimeWait, now)
	case src.state < tcpsEstablished || dst.state < tcpsEstablished:
		c.setExpiry(p, TCPSynRecv, now)
	case src.state >= tcpsClosing || dst.state >= tcpsClosing:
		c.setExpiry(p, TCPFinWait, now)
	default:
		c.setExpiry(p, TCPEstablished, now)
	}
	return updateValid
}

// tcpDumpState is the state `dpctl/dump-conntrack` shows: the larger of
// the two sides, with the userspace-only states folded as OVS does.
func tcpDumpState(c *Conn) string {
	s := max(c.tcp[0].state, c.tcp[1].state)
	switch s {
	case tcpsFinWait2:
		s = tcpsTimeWait
	case tcpsSynRecv:
		s = tcpsEstablished
	}
	return tcpStateNames[s]
}
