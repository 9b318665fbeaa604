package dpnetdev

// FlowCount returns the megaflows installed, counting each worker's copy
// as dpif-netdev's flow count sums its PMD threads' tables. It reads one
// atomic per worker and takes no lock, so the upcall path can apply the
// OpenFlow layer's dynamic flow limit on every miss.
func (dp *Datapath) FlowCount() int {
	n := int64(0)
	for _, w := range dp.workerList() {
		n += w.nflows.Load()
	}
	return int(n)
}

// ConfiguredFlowLimit returns the configured megaflow limit
// (other_config:flow-limit, as set by New or SetFlowLimit): the ceiling of
// the OpenFlow layer's dynamic limit, and each worker's hard bound.
func (dp *Datapath) ConfiguredFlowLimit() int {
	dp.mu.Lock()
	defer dp.mu.Unlock()
	return dp.cfg.FlowLimit
}
