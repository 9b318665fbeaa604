package dpnetdev

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/datapath/netdev"
)

// maxPortNo bounds datapath port numbers so the fast-path port table can
// be a slice.
const maxPortNo = 1 << 16

// port is a datapath port as the workers see it.
type port struct {
	no  dpif.PortNo
	dev netdev.Device
}

// portTable is an immutable snapshot of the ports, published atomically.
type portTable struct {
	byNo   []*port // indexed by port number; nil where free
	byName map[string]*port
}

func (t *portTable) get(no uint32) *port {
	if int(no) < len(t.byNo) {
		return t.byNo[no]
	}
	return nil
}

// info is the port as dpif describes it.
func (p *port) info() dpif.PortInfo {
	return dpif.PortInfo{No: p.no, Name: p.dev.Name(), Type: p.dev.Type(), Device: p.dev}
}

// portSet owns the datapath's ports. Writers (add, del) serialise on mu
// and publish a new portTable; the workers read the snapshot with an
// atomic load and never take mu. The Datapath assigns the ports' receive
// queues to workers after each change (pmds.go).
type portSet struct {
	mu    sync.Mutex
	table atomic.Pointer[portTable]
}

func newPortSet() *portSet {
	s := &portSet{}
	s.table.Store(&portTable{byName: map[string]*port{}})
	return s
}

// load returns the current snapshot (the packet path's read).
func (s *portSet) load() *portTable { return s.table.Load() }

// add adds a device as port want (0 or PortNone: the lowest free number
// from 1).
func (s *portSet) add(dev netdev.Device, want dpif.PortNo) (dpif.PortNo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.table.Load()
	if _, dup := old.byName[dev.Name()]; dup {
		return 0, fmt.Errorf("dpnetdev: add port %q: %w", dev.Name(), dpif.ErrNameInUse)
	}
	no := want
	if want == dpif.PortNone {
		no = 0
		for n := uint32(1); n < maxPortNo; n++ {
			if old.get(n) == nil {
				no = n
				break
			}
		}
		if no == 0 {
			return 0, fmt.Errorf("dpnetdev: add port %q: no free port number", dev.Name())
		}
	} else if no >= maxPortNo {
		return 0, fmt.Errorf("dpnetdev: add port %q: port number %d out of range", dev.Name(), no)
	} else if old.get(no) != nil {
		return 0, fmt.Errorf("dpnetdev: add port %q as %d: %w", dev.Name(), no, dpif.ErrPortInUse)
	}
	nt := &portTable{byName: make(map[string]*port, len(old.byName)+1)}
	size := len(old.byNo)
	if int(no) >= size {
		size = int(no) + 1
	}
	nt.byNo = make([]*port, size)
	copy(nt.byNo, old.byNo)
	for k, v := range old.byName {
		nt.byName[k] = v
	}
	p := &port{no: no, dev: dev}
	nt.byNo[no] = p
	nt.byName[dev.Name()] = p
	s.table.Store(nt)
	return no, nil
}

// del removes a port.
func (s *portSet) del(no dpif.PortNo) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.table.Load()
	p := old.get(no)
	if p == nil {
		return fmt.Errorf("dpnetdev: delete port %d: %w", no, dpif.ErrNoSuchPort)
	}
	nt := &portTable{byNo: make([]*port, len(old.byNo)), byName: make(map[string]*port, len(old.byName))}
	copy(nt.byNo, old.byNo)
	nt.byNo[no] = nil
	for k, v := range old.byName {
		if v != p {
			nt.byName[k] = v
		}
	}
	s.table.Store(nt)
	return nil
}

// list returns the ports in port-number order.
func (s *portSet) list() []dpif.PortInfo {
	var out []dpif.PortInfo
	for _, p := range s.table.Load().byNo {
		if p != nil {
			out = append(out, p.info())
		}
	}
	return out
}
