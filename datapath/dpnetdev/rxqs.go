package dpnetdev

// RxQueue is one receive queue as a worker polls it (pmd-rxq-show).
type RxQueue struct {
	Port   string // the port's device name
	PortNo uint32
	Queue  int
}

// WorkerRxQueues returns the receive queues worker i is assigned, in
// assignment order (nil for a worker out of range or without queues).
func (dp *Datapath) WorkerRxQueues(i int) []RxQueue {
	ws := dp.workerList()
	if i < 0 || i >= len(ws) {
		return nil
	}
	a := ws[i].rxqs.Load()
	if a == nil {
		return nil
	}
	out := make([]RxQueue, 0, len(*a))
	for _, q := range *a {
		out = append(out, RxQueue{Port: q.port.dev.Name(), PortNo: uint32(q.port.no), Queue: q.q})
	}
	return out
}
