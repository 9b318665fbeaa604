package conntrack

// timeoutClass indexes a TimeoutPolicy.
type timeoutClass uint8

// Timeout classes, named after the attributes of Open vSwitch's
// Timeout_Policy (tcp_syn_sent, ...); the comments give the conntrack
// situation each one covers.
const (
	TCPSynSent     timeoutClass = iota // first packet of a TCP connection
	TCPSynRecv                         // opening: one side not established yet
	TCPEstablished                     // both sides established
	TCPFinWait                         // one side closing
	TCPTimeWait                        // both sides closing
	TCPClose                           // both sides closed (or reset)
	UDPFirst                           // first packet (UDP and other protocols)
	UDPSingle                          // more packets, one direction only
	UDPMultiple                        // packets seen both ways
	ICMPFirst                          // ICMP query sent
	ICMPReply                          // ICMP reply seen
	NumTimeouts
)

var timeoutNames = [NumTimeouts]string{
	"tcp_syn_sent", "tcp_syn_recv", "tcp_established", "tcp_fin_wait",
	"tcp_time_wait", "tcp_close", "udp_first", "udp_single", "udp_multiple",
	"icmp_first", "icmp_reply",
}

// String returns the OVSDB Timeout_Policy key of the class.
func (t timeoutClass) String() string {
	if t < NumTimeouts {
		return timeoutNames[t]
	}
	return "invalid"
}

// TimeoutClassByName returns the class with the given OVSDB key.
func TimeoutClassByName(name string) (timeoutClass, bool) {
	for i, n := range timeoutNames {
		if n == name {
			return timeoutClass(i), true
		}
	}
	return 0, false
}

// TimeoutPolicy holds a timeout in seconds per class.
type TimeoutPolicy [NumTimeouts]uint32

// DefaultTimeoutPolicy returns Open vSwitch's userspace defaults
// (lib/conntrack-tp.c).
func DefaultTimeoutPolicy() TimeoutPolicy {
	return TimeoutPolicy{
		TCPSynSent:     30,
		TCPSynRecv:     30,
		TCPEstablished: 24 * 60 * 60,
		TCPFinWait:     15 * 60,
		TCPTimeWait:    45,
		TCPClose:       30,
		UDPFirst:       60,
		UDPSingle:      60,
		UDPMultiple:    30,
		ICMPFirst:      60,
		ICMPReply:      30,
	}
}
