// Package pmd owns the placement side of the userspace datapath's
// poll-mode (PMD) threads, as Open vSwitch's dpif-netdev and ovs-numa
// decide it: the machine's NUMA layout (CPU cores and their nodes, read
// from sysfs or given as ovs-vswitchd's --dummy-numa list), the cores a
// pmd-cpu-mask selects, and the assignment of receive queues to PMD
// threads (pmd-rxq-affinity first, then the roundrobin, cycles or group
// algorithm, with pmd-rxq-isolate), together with the log lines Open
// vSwitch writes while it assigns. It also holds the auto load balance
// settings and its dry-run decision (alb.go).
//
// Everything here is a pure function of its inputs: no goroutines and no
// I/O except reading the layout from sysfs. The datapath (dpnetdev) runs
// the threads this package places. It imports nothing of gvs.
package pmd
