package bridge

import "strings"

// LogOnlyError is an AddPort failure that Open vSwitch logs without
// writing it to Interface.error (the interface gets ofport -1 and an
// empty error, and ovs-vsctl points at the log).
type LogOnlyError struct{ Msg string }

func (e *LogOnlyError) Error() string { return e.Msg }

// reservedPrefixes are the names of the datapath ports Open vSwitch's
// tunnel vports create (genev_sys_6081, ...): an interface whose name
// starts with one is refused (netdev_is_reserved_name).
var reservedPrefixes = []string{"genev_sys", "gre_sys", "vxlan_sys", "lisp_sys", "stt_sys", "erspan_sys",
	"ip6erspan_sys", "ip6gre_sys", "gtpu_sys", "udp_sys"}

// ReservedName is the error for an interface named like a datapath
// ("ovs-" and a datapath type) or a tunnel vport's datapath port, which
// Open vSwitch refuses to create ("could not create interface NAME,
// name is reserved"); nil for other names.
func ReservedName(name string, dpTypes []string) error {
	reserved := false
	for _, p := range reservedPrefixes {
		if strings.HasPrefix(name, p) {
			reserved = true
		}
	}
	if t, ok := strings.CutPrefix(name, "ovs-"); ok {
		for _, d := range dpTypes {
			if t == d {
				reserved = true
			}
		}
	}
	if !reserved {
		return nil
	}
	return &LogOnlyError{Msg: "could not create interface " + name + ", name is reserved"}
}
