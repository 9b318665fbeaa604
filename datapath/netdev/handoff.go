package netdev

// Handoff is what a port gives the process that takes it over in a
// restart without loss: the kernel objects it owns, as descriptors, and
// how far it had got, so that the next process goes on with the same
// sockets and rings instead of reopening the interface. Frames that
// arrive in between wait in the kernel's queues and rings.
type Handoff struct {
	// Type and Name are the port's (Device.Type, Device.Name); the
	// adopting package checks them against what it is asked to open.
	Type, Name string
	// Fds are the descriptors, in the order the device package defines.
	// They stay the handing device's: send or duplicate them, never
	// close them.
	Fds []int
	// State is the device package's own encoding of its position,
	// starting with a format version that the adopting side checks.
	State []byte
	// Stats are the counters so far, which the adopting device starts
	// from, so that the Interface table's statistics do not restart.
	Stats Stats
}

// HandingOff is a Device that can be handed to another process. Handoff
// must be called with the port quiet: no Recv or Send running or started
// until the handover has either completed (this process then exits
// without closing the port) or failed (this process goes on using it).
type HandingOff interface {
	Handoff() (Handoff, error)
}

// AddStats adds a handed-over device's counters to c, so that an adopted
// port goes on counting from them.
func (c *Counters) AddStats(s Stats) {
	c.AddRx(s.RxPackets, s.RxBytes)
	c.AddTx(s.TxPackets, s.TxBytes)
	c.AddRxDropped(s.RxDropped)
	c.AddRxErrors(s.RxErrors)
	c.AddTxDropped(s.TxDropped)
	c.AddTxErrors(s.TxErrors)
}
