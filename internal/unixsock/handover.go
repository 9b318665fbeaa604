package unixsock

import (
	"fmt"
	"net"
	"os"
	"sort"
	"sync"
	"syscall"
	"time"
)

// Handed is a daemon's listening sockets, unix ones by path and TCP ones
// by "tcp:" and their address, for a handover to a successor process
// (vswitchd/handover): the running daemon sends their descriptors, and
// the successor, whose Listen and ListenTCP calls find them here, serves
// the same sockets, so that clients never find a path or port without a
// listener. A Perm carries it to every Listen of the daemon.
type Handed struct {
	mu        sync.Mutex
	live      map[string]handedListener
	inherited map[string]*os.File
	// taken are the unix listeners made of inherited sockets: their
	// files are the predecessor's until Own.
	taken []*net.UnixListener
}

// handedListener is what the unix and TCP listeners have in common.
type handedListener interface {
	net.Listener
	SyscallConn() (syscall.RawConn, error)
	SetDeadline(time.Time) error
}

// NewHanded returns an empty set.
func NewHanded() *Handed {
	return &Handed{live: map[string]handedListener{}, inherited: map[string]*os.File{}}
}

// ListenTCP listens on a TCP address ("IP:PORT", ":PORT") as net.Listen
// does, through p.Handed when set: a TCP listener a predecessor handed
// over for the same address is taken instead.
func ListenTCP(network, addr string, p Perm) (net.Listener, error) {
	if p.Handed == nil {
		return net.Listen(network, addr)
	}
	key := "tcp:" + addr
	h := p.Handed
	h.mu.Lock()
	f := h.inherited[key]
	delete(h.inherited, key)
	h.mu.Unlock()
	var l handedListener
	if f != nil {
		fl, err := net.FileListener(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("listening on %s: handed socket: %w", addr, err)
		}
		tl, ok := fl.(*net.TCPListener)
		if !ok {
			fl.Close()
			return nil, fmt.Errorf("listening on %s: handed socket is not a TCP socket", addr)
		}
		l = tl
	} else {
		nl, err := net.Listen(network, addr)
		if err != nil {
			return nil, err
		}
		tl, ok := nl.(*net.TCPListener)
		if !ok {
			return nl, nil
		}
		l = tl
	}
	h.mu.Lock()
	h.live[key] = l
	h.mu.Unlock()
	return l, nil
}

// Inherit records a listening socket a predecessor handed over for path;
// the next Listen on path takes it. h owns fd.
func (h *Handed) Inherit(path string, fd int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if old := h.inherited[path]; old != nil {
		old.Close()
	}
	h.inherited[path] = os.NewFile(uintptr(fd), path)
}

// CloseUnclaimed closes the inherited sockets no Listen took (those of
// things that are gone) and returns their paths.
func (h *Handed) CloseUnclaimed() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var paths []string
	for p, f := range h.inherited {
		f.Close()
		paths = append(paths, p)
	}
	h.inherited = map[string]*os.File{}
	sort.Strings(paths)
	return paths
}

func (h *Handed) listen(path string, open func() (*net.UnixListener, error)) (*net.UnixListener, error) {
	h.mu.Lock()
	f := h.inherited[path]
	delete(h.inherited, path)
	h.mu.Unlock()
	var l *net.UnixListener
	if f != nil {
		fl, err := net.FileListener(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("listening on %s: handed socket: %w", path, err)
		}
		ul, ok := fl.(*net.UnixListener)
		if !ok {
			fl.Close()
			return nil, fmt.Errorf("listening on %s: handed socket is not a unix socket", path)
		}
		ul.SetUnlinkOnClose(false) // until Own: a failed successor leaves them alone
		l = ul
		h.mu.Lock()
		h.taken = append(h.taken, ul)
		h.mu.Unlock()
	} else {
		var err error
		if l, err = open(); err != nil {
			return nil, err
		}
	}
	h.mu.Lock()
	h.live[path] = l
	h.mu.Unlock()
	return l, nil
}

// Own makes the inherited unix listeners this process's: closing one
// from now on removes its file, as closing one this process created
// does. A successor calls it once it has taken over.
func (h *Handed) Own() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, l := range h.taken {
		l.SetUnlinkOnClose(true)
	}
	h.taken = nil
}

// Listener is one listening socket's path (or "tcp:" and address) and
// descriptor.
type Listener struct {
	Path string
	Fd   int
}

// Listeners returns the descriptors of the listeners still open, by
// path. They stay the listeners': send them, never close them.
func (h *Handed) Listeners() []Listener {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []Listener
	for _, p := range sortedPaths(h.live) {
		l := h.live[p]
		rc, err := l.SyscallConn()
		if err != nil {
			delete(h.live, p)
			continue
		}
		fd := -1
		if err := rc.Control(func(f uintptr) { fd = int(f) }); err != nil || fd < 0 {
			delete(h.live, p) // closed
			continue
		}
		out = append(out, Listener{Path: p, Fd: fd})
	}
	return out
}

func sortedPaths(m map[string]handedListener) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Hold stops this process accepting on its listeners (a successor that
// shares them accepts instead): each Accept fails with a timeout, which
// the servers retry, until resume.
func (h *Handed) Hold() (resume func()) {
	h.mu.Lock()
	ls := make([]handedListener, 0, len(h.live))
	for _, l := range h.live {
		ls = append(ls, l)
	}
	h.mu.Unlock()
	past := time.Unix(1, 0)
	for _, l := range ls {
		l.SetDeadline(past)
	}
	return func() {
		for _, l := range ls {
			l.SetDeadline(time.Time{})
		}
	}
}
