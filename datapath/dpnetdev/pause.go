package dpnetdev

import (
	"errors"
	"sync"
	"time"
)

// pause is one Pause: workers park on it until resume is closed.
type pause struct {
	parked sync.WaitGroup
	resume chan struct{}
}

// Pause stops forwarding: every poll worker finishes its round (the
// batch it holds is processed and sent) and parks, and the sweeper stops
// expiring megaflows and connections; Pause returns once all are parked,
// or an error after timeout (the datapath is then resumed). Received
// frames wait in the ports' kernel queues. It is the quiet point at which
// ports and state can be handed to another process; the returned
// function lets forwarding go on if that fails. Flow puts and Execute
// keep working while paused.
func (dp *Datapath) Pause(timeout time.Duration) (resume func(), err error) {
	if !dp.started.Load() {
		return nil, errors.New("dpnetdev: pausing a datapath that is not started")
	}
	dp.pauseMu.Lock()
	p := &pause{resume: make(chan struct{})}
	p.parked.Add(len(dp.workerList()))
	dp.pausing.Store(p)
	parked := make(chan struct{})
	go func() { p.parked.Wait(); close(parked) }()
	var once sync.Once
	resume = func() {
		once.Do(func() {
			dp.pausing.Store(nil)
			close(p.resume)
			dp.pauseMu.Unlock()
			if dp.pmdPending.Swap(false) {
				dp.reconfigure() // what came while paused (pmds.go)
			}
		})
	}
	select {
	case <-parked:
		return resume, nil
	case <-time.After(timeout):
		resume()
		return nil, errors.New("dpnetdev: workers did not pause in time")
	case <-dp.stop:
		resume()
		return nil, errors.New("dpnetdev: datapath closed while pausing")
	}
}

// Paused reports whether a Pause is in effect.
func (dp *Datapath) Paused() bool { return dp.pausing.Load() != nil }

// parkIfPaused parks the calling worker while a Pause is in effect; it
// holds nothing of conntrack while parked.
func (w *worker) parkIfPaused() {
	p := w.dp.pausing.Load()
	if p == nil || p == w.parkedOn {
		return
	}
	w.parkedOn = p
	w.ctr.Offline()
	p.parked.Done()
	select {
	case <-p.resume:
	case <-w.dp.stop:
	case <-w.quit:
	}
}
