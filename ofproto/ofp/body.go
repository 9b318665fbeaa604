package ofp

// The accessors of Action.Body: each returns the body of its kind, or the
// zero value when the action holds another (a nil pointer).

// CT is a ct() action's body.
func (a *Action) CT() *CT { b, _ := a.Body.(*CT); return b }

// Controller is a controller() action's body.
func (a *Action) Controller() *Controller { b, _ := a.Body.(*Controller); return b }

// Learn is a learn() action's body.
func (a *Action) Learn() *Learn { b, _ := a.Body.(*Learn); return b }

// Conj is a conjunction() action's body.
func (a *Action) Conj() *Conjunction { b, _ := a.Body.(*Conjunction); return b }

// NAT is a nat() action's body.
func (a *Action) NAT() *NAT { b, _ := a.Body.(*NAT); return b }

// Multipath is a multipath() action's body.
func (a *Action) Multipath() *Multipath { b, _ := a.Body.(*Multipath); return b }

// Bundle is a bundle() or bundle_load() action's body.
func (a *Action) Bundle() *Bundle { b, _ := a.Body.(*Bundle); return b }

// Sample is a sample() action's body.
func (a *Action) Sample() *Sample { b, _ := a.Body.(*Sample); return b }

// FinTimeout is a fin_timeout() action's body.
func (a *Action) FinTimeout() *FinTimeout { b, _ := a.Body.(*FinTimeout); return b }

// IDs is a dec_ttl action's controller ids ([0] for plain dec_ttl).
func (a *Action) IDs() []uint16 { b, _ := a.Body.([]uint16); return b }

// Data is a raw action's wire bytes or a note's bytes.
func (a *Action) Data() []byte { b, _ := a.Body.([]byte); return b }
