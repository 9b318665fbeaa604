package backer

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gvs-project/gvs/datapath/conntrack"
	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/l2fib"
	"github.com/gvs-project/gvs/datapath/netdev"
	"github.com/gvs-project/gvs/datapath/netdev/afpacket"
	"github.com/gvs-project/gvs/datapath/netdev/afxdp"
	"github.com/gvs-project/gvs/datapath/netdev/tap"
	"github.com/gvs-project/gvs/internal/statefile"
	"github.com/gvs-project/gvs/ofproto/ofswitch"
	"github.com/gvs-project/gvs/vswitchd/handover"
	"golang.org/x/sys/unix"
)

func closeFd(fd int) { unix.Close(fd) }

// The backer's side of a handover between two processes
// (vswitchd/handover, docs/reliability.md). The running daemon freezes
// the backer (Freeze): its datapaths pause at a batch boundary, every
// bridge's flow tables, groups and meters are held, and it gives its
// kernel ports' descriptors and, as statefile sections, each bridge's
// OpenFlow state, MAC table and port numbers and each datapath's
// conntrack. The successor's backer adopts the handed ports by name as
// the bridge layer adds them (same datapath port number; the OpenFlow
// number comes from the database's ofport and is checked), with its
// datapaths paused from creation, then applies the state (ApplyState)
// and resumes forwarding (ResumeDatapaths).

// Section names and the version of the ports section.
const (
	secOpenFlow  = "openflow/"
	secMAC       = "mac/"
	secPorts     = "ports/"
	secConntrack = "conntrack/"
	secMegaflows = "megaflows/"
	// PortsStateVersion is the version of a ports section: one
	// "NAME OFPORT" line per port.
	PortsStateVersion uint16 = 1
	// MegaflowsStateVersion is the version of a megaflows section: one
	// line per first-pass megaflow, its match as dpctl/dump-flows -m
	// prints it (flow.Match.Format).
	MegaflowsStateVersion uint16 = 1
)

// Handover is the backer's side of a handover (Backer.Handover): it
// reads the backer's bridges and datapaths under the backer's lock and
// keeps the successor's adoption state.
type Handover struct {
	mu      *sync.Mutex
	bridges map[string]*dpBridge
	dps     *datapathSet
	ho      handoverState
}

// Handover is the backer's handover side.
func (s *Backer) Handover() *Handover { return s.hand }

// handoverState is the successor's adoption: the handed ports by
// interface name, those adopted and the errors met.
type handoverState struct {
	adopt   map[string]handover.Port
	adopted map[string]bool
	nos     map[string]dpif.PortNo // the datapath port numbers, until AddPort takes them
	errs    []error
}

// adoptedPortNo is the datapath port number a just adopted device had.
func (s *Handover) adoptedPortNo(name string) (dpif.PortNo, bool) {
	no, ok := s.ho.nos[name]
	delete(s.ho.nos, name)
	return no, ok
}

// Frozen is a frozen backer: what it hands over, and Thaw to go on
// forwarding if the handover fails.
type Frozen struct {
	Ports    []handover.Port
	Sections []statefile.Section
	Thaw     func()
}

// Freeze pauses every datapath, holds every bridge's OpenFlow state and
// the backer's configuration (the bridge layer waits), and returns the
// ports and the state. On error nothing stays frozen.
func (s *Handover) Freeze(timeout time.Duration) (*Frozen, error) {
	// The datapaths first: a worker in an upcall may need the backer.
	var resumes, undo []func()
	locked := false
	thaw := func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
		if locked {
			s.mu.Unlock()
		}
		for _, r := range resumes {
			r()
		}
	}
	fail := func(err error) (*Frozen, error) {
		thaw()
		return nil, err
	}
	for _, dp := range s.dps.datapaths() {
		resume, err := dp.Pause(timeout)
		if err != nil {
			return fail(fmt.Errorf("pausing %s: %w", dp.Name(), err))
		}
		resumes = append(resumes, resume)
	}
	s.mu.Lock()
	locked = true
	fr := &Frozen{}
	for _, bn := range sortedKeys(s.bridges) {
		b := s.bridges[bn]
		st, release, err := b.of.HoldState()
		if err != nil {
			return fail(err)
		}
		undo = append(undo, release)
		fr.Sections = append(fr.Sections,
			statefile.Section{Name: secOpenFlow + bn, Version: ofswitch.StateVersion, Data: st},
			statefile.Section{Name: secMAC + bn, Version: l2fib.StateVersion, Data: b.fdb.ExportState()})
		var lines strings.Builder
		for _, pn := range sortedKeys(b.ports) {
			p := b.ports[pn]
			fmt.Fprintf(&lines, "%s %d\n", pn, p.ofport)
			if p.dev == nil {
				continue
			}
			ho, ok := p.dev.(netdev.HandingOff)
			if !ok {
				continue // dummy ports are recreated from the database
			}
			h, err := ho.Handoff()
			if err != nil {
				return fail(fmt.Errorf("port %s: %w", pn, err))
			}
			fr.Ports = append(fr.Ports, handover.Port{DPType: b.dpTyp, DPPort: uint32(p.odp), Handoff: h})
		}
		fr.Sections = append(fr.Sections, statefile.Section{Name: secPorts + bn, Version: PortsStateVersion, Data: []byte(lines.String())})
	}
	for _, t := range sortedKeys(s.dps.dps) {
		dp := s.dps.dps[t]
		fr.Sections = append(fr.Sections, statefile.Section{Name: secConntrack + t, Version: conntrack.StateVersion, Data: dp.Conntrack().ExportState()})
		fr.Sections = append(fr.Sections, statefile.Section{Name: secMegaflows + t, Version: MegaflowsStateVersion, Data: megaflowLines(dp)})
	}
	fr.Thaw = thaw
	return fr, nil
}

// Adopt makes the backer take the handed ports instead of opening their
// interfaces, and pause every datapath it creates until
// ResumeDatapaths. It is called before any bridge exists.
func (s *Handover) Adopt(ports []handover.Port) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ho.adopt = map[string]handover.Port{}
	s.ho.adopted = map[string]bool{}
	s.ho.nos = map[string]dpif.PortNo{}
	for _, p := range ports {
		s.ho.adopt[p.Handoff.Name] = p
	}
	s.dps.pauseNew.Store(true)
}

// adoptDevice returns the handed device of an interface, if there is
// one, checked for its type and datapath; ok is false when the port
// was not handed over.
func (s *Handover) adoptDevice(b *dpBridge, name, typ string) (dev netdev.Device, no dpif.PortNo, ok bool, err error) {
	p, ok := s.ho.adopt[name]
	if !ok {
		return nil, dpif.PortNone, false, nil
	}
	delete(s.ho.adopt, name)
	defer func() {
		if err != nil {
			for _, fd := range p.Handoff.Fds {
				closeFd(fd)
			}
			s.ho.errs = append(s.ho.errs, err)
		} else {
			s.ho.adopted[name] = true
			s.ho.nos[name] = no
		}
	}()
	if p.DPType != b.dpTyp {
		return nil, 0, true, fmt.Errorf("handed port %s was in datapath %s, bridge %s is in %s", name, p.DPType, b.name, b.dpTyp)
	}
	if p.Handoff.Type != typ {
		return nil, 0, true, fmt.Errorf("handed port %s is of type %s, the database says %s", name, p.Handoff.Type, typ)
	}
	switch typ {
	case "system":
		d, err := afpacket.Adopt(name, p.Handoff)
		if err != nil {
			return nil, 0, true, err
		}
		return d, dpif.PortNo(p.DPPort), true, nil
	case "internal":
		d, err := tap.Adopt(name, p.Handoff)
		if err != nil {
			return nil, 0, true, err
		}
		return d, dpif.PortNo(p.DPPort), true, nil
	case afxdp.Type:
		d, err := afxdp.Adopt(name, p.Handoff)
		if err != nil {
			return nil, 0, true, err
		}
		return d, dpif.PortNo(p.DPPort), true, nil
	}
	return nil, 0, true, fmt.Errorf("handed port %s of type %s cannot be adopted", name, typ)
}

// AdoptionDone reports whether every handed port has been adopted, and
// the first adoption error.
func (s *Handover) AdoptionDone() (bool, []string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.ho.errs) > 0 {
		return false, nil, errors.Join(s.ho.errs...)
	}
	pending := sortedKeys(s.ho.adopt)
	return len(pending) == 0, pending, nil
}

// CheckState checks the state's sections against the bridges and
// datapaths and their versions before anything is applied.
func (s *Handover) CheckState(f *statefile.File, versions map[string]uint16) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sec := range f.Sections {
		kind, name, _ := strings.Cut(sec.Name, "/")
		want, ok := versions[kind+"/"]
		if !ok {
			return fmt.Errorf("state section %s: unknown kind", sec.Name)
		}
		if sec.Version != want {
			return fmt.Errorf("state section %s has version %d (written by gvs %s); this gvs reads version %d", sec.Name, sec.Version, f.GVSVersion, want)
		}
		switch kind + "/" {
		case secConntrack, secMegaflows:
			if _, ok := s.dps.dps[name]; !ok {
				return fmt.Errorf("state section %s: no datapath %s here", sec.Name, name)
			}
		default:
			b := s.bridges[name]
			if b == nil {
				return fmt.Errorf("state section %s: no bridge %s here", sec.Name, name)
			}
			if kind+"/" == secPorts {
				if err := checkPorts(b, sec.Data); err != nil {
					return fmt.Errorf("state section %s: %w", sec.Name, err)
				}
			}
		}
	}
	return nil
}

// StateVersions are the section versions this build reads, by kind.
func StateVersions() map[string]uint16 {
	return map[string]uint16{secOpenFlow: ofswitch.StateVersion, secMAC: l2fib.StateVersion,
		secPorts: PortsStateVersion, secConntrack: conntrack.StateVersion, secMegaflows: MegaflowsStateVersion}
}

// checkPorts checks that every port of a ports section has the same
// OpenFlow number here.
func checkPorts(b *dpBridge, data []byte) error {
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if line == "" {
			continue
		}
		name, no, ok := strings.Cut(line, " ")
		n, err := strconv.ParseInt(no, 10, 64)
		if !ok || err != nil {
			return fmt.Errorf("bad line %q", line)
		}
		p := b.ports[name]
		if p == nil {
			return fmt.Errorf("port %s is not in bridge %s here", name, b.name)
		}
		if p.ofport != n {
			return fmt.Errorf("port %s is OpenFlow port %d here, %d before", name, p.ofport, n)
		}
	}
	return nil
}

// ApplyState applies checked state (CheckState) to the bridges and
// datapaths, which are paused: OpenFlow state, MAC tables, conntrack
// (whose connections lose the time since written). It returns a summary
// for the log.
func (s *Handover) ApplyState(f *statefile.File) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var sum []string
	for _, sec := range f.Sections {
		kind, name, _ := strings.Cut(sec.Name, "/")
		switch kind + "/" {
		case secOpenFlow:
			if err := s.bridges[name].of.ImportState(sec.Data); err != nil {
				return "", err
			}
			sum = append(sum, fmt.Sprintf("%s: %d flows", name, s.bridges[name].of.Tables().Count()))
		case secMAC:
			n, err := s.bridges[name].fdb.ImportState(sec.Data)
			if err != nil {
				return "", fmt.Errorf("bridge %s: MAC table: %w", name, err)
			}
			sum = append(sum, fmt.Sprintf("%s: %d MAC entries", name, n))
		case secConntrack:
			res, err := s.dps.dps[name].Conntrack().ImportState(sec.Data, max(0, time.Since(f.Written)))
			if err != nil {
				return "", fmt.Errorf("datapath %s: conntrack: %w", name, err)
			}
			sum = append(sum, fmt.Sprintf("%s: conntrack %s", name, res.String()))
		case secMegaflows:
			n, err := s.prewarmLocked(name, sec.Data)
			if err != nil {
				return "", fmt.Errorf("datapath %s: megaflows: %w", name, err)
			}
			sum = append(sum, fmt.Sprintf("%s: %d megaflows", name, n))
		}
	}
	sort.Strings(sum)
	return strings.Join(sum, ", "), nil
}

// megaflowLines lists a datapath's first-pass megaflows (recirculation id
// 0: later passes' ids are this process's) as their matches' text.
func megaflowLines(dp interface{ FlowDump(func(*dpif.Flow) bool) }) []byte {
	var b strings.Builder
	seen := map[dpif.UFID]bool{}
	dp.FlowDump(func(f *dpif.Flow) bool {
		if f.Match.Key.RecircID == 0 && !seen[f.UFID] {
			seen[f.UFID] = true // one line per megaflow, not per worker's copy
			b.WriteString(f.Match.Format(true))
			b.WriteByte('\n')
		}
		return true
	})
	return []byte(b.String())
}

// prewarmLocked installs a predecessor's megaflows in datapath typ: each
// match is translated again by the bridge owning its input port (the
// same OpenFlow state was applied first), so the successor starts with
// the megaflows its traffic needs instead of a miss for every flow. A
// line that does not parse is an error; a match no bridge owns, or whose
// translation is transient, is skipped. Called with the backer's lock
// held and the datapaths paused.
func (s *Handover) prewarmLocked(typ string, data []byte) (int, error) {
	owner := map[uint32]*dpBridge{}
	for _, b := range s.bridges {
		if b.dpTyp != typ || b.of == nil {
			continue
		}
		for _, p := range b.ports {
			if p.dev != nil {
				owner[uint32(p.odp)] = b
			}
		}
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if line == "" {
			continue
		}
		m, err := flow.ParseMatch(line)
		if err != nil {
			return n, fmt.Errorf("bad megaflow %q: %w", line, err)
		}
		b := owner[m.Key.InPort]
		if b == nil {
			continue
		}
		if ok, err := b.of.Upcalls().Prewarm(&m.Key); err != nil {
			return n, err
		} else if ok {
			n++
		}
	}
	return n, nil
}

// ResumeDatapaths starts forwarding on the datapaths paused since their
// creation (Adopt), and creates later ones running.
func (s *Handover) ResumeDatapaths() {
	s.dps.pauseNew.Store(false)
	s.dps.mu.Lock()
	rs := s.dps.resumes
	s.dps.resumes = nil
	s.dps.mu.Unlock()
	for _, r := range rs {
		r()
	}
}
