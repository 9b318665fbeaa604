package dpnetdev

import (
	"reflect"
	"testing"

	"github.com/gvs-project/gvs/datapath/dpif"
)

func TestWorkerRxQueuesSpreadPortsRoundRobin(t *testing.T) {
	cfg := dpif.DefaultConfig()
	cfg.Workers = 2
	s := newTestSwitch(t, 3, cfg)
	got := [][]RxQueue{s.dp.WorkerRxQueues(0), s.dp.WorkerRxQueues(1)}
	want := [][]RxQueue{
		{{Port: "p1", PortNo: 1, Queue: 0}, {Port: "p3", PortNo: 3, Queue: 0}},
		{{Port: "p2", PortNo: 2, Queue: 0}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("assignment %+v, want %+v", got, want)
	}
	if q := s.dp.WorkerRxQueues(2); q != nil {
		t.Errorf("worker 2 of 2 has queues %+v", q)
	}
}
