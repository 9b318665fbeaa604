package backer

import "strings"

// logPortError logs why an interface could not be added, in Open
// vSwitch's words and at its level: a patch port's configuration errors
// at ERR (module netdev_vport), every other failure ("could not open
// network device eth99 (No such device)", "could not add network device
// ... to ofproto (...)") at WARN (module bridge). Interface.error holds
// the same text; every Open vSwitch tool points the user at this log.
//
// gvs reconciles on every database change and every few seconds, so a
// failure is logged when it first happens or its reason changes, not on
// each retry. A nil err (the interface was added) forgets the failure.
// Called with the switch's mu held.
func (s *Backer) logPortError(bname, iface string, err error) {
	key := bname + "/" + iface
	if err == nil {
		delete(s.portErrs, key)
		return
	}
	msg := err.Error()
	if s.portErrs[key] == msg {
		return
	}
	if s.portErrs == nil {
		s.portErrs = map[string]string{}
	}
	s.portErrs[key] = msg
	if strings.Contains(msg, ": patch ") {
		s.cfg.Logger("netdev_vport").Error(msg)
		return
	}
	s.cfg.Logger("bridge").Warn(msg)
}

// forgetPortErrors drops the remembered failures of a bridge's
// interfaces that are no longer configured, so that one added again is
// logged again. Called with the switch's mu held.
func (s *Backer) forgetPortErrors(bname string, configured map[string]bool) {
	prefix := bname + "/"
	for key := range s.portErrs {
		if name, ok := strings.CutPrefix(key, prefix); ok && !configured[name] {
			delete(s.portErrs, key)
		}
	}
}
