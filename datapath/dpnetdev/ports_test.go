package dpnetdev

import (
	"errors"
	"reflect"
	"testing"

	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/datapath/netdev/dummy"
)

// queuesOf lists worker w's assigned queues as "port:queue" pairs.
func queuesOf(w *worker) [][2]int {
	var out [][2]int
	for _, q := range *w.rxqs.Load() {
		out = append(out, [2]int{int(q.port.no), q.q})
	}
	return out
}

func TestPortSetSpreadsQueuesRoundRobinAndReassignsOnDelete(t *testing.T) {
	cfg := dpif.DefaultConfig()
	cfg.Workers = 2
	dp := New("t", cfg)
	workers := dp.workerList()
	s := dp
	a, _ := dummy.New(dummy.Config{Name: "a", RxQueues: 3})
	b, _ := dummy.New(dummy.Config{Name: "b", RxQueues: 2})
	defer a.Close()
	defer b.Close()
	if no, err := s.AddPort(a, dpif.PortNone); err != nil || no != 1 {
		t.Fatalf("add a = %d, %v; want 1", no, err)
	}
	if no, err := s.AddPort(b, 5); err != nil || no != 5 {
		t.Fatalf("add b = %d, %v; want 5", no, err)
	}
	if got, want := queuesOf(workers[0]), [][2]int{{1, 0}, {1, 2}, {5, 1}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("worker 0 queues = %v, want %v", got, want)
	}
	if got, want := queuesOf(workers[1]), [][2]int{{1, 1}, {5, 0}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("worker 1 queues = %v, want %v", got, want)
	}
	if err := s.DelPort(1); err != nil {
		t.Fatal(err)
	}
	if got, want := queuesOf(workers[0]), [][2]int{{5, 0}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("worker 0 queues after delete = %v, want %v", got, want)
	}
	if got, want := queuesOf(workers[1]), [][2]int{{5, 1}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("worker 1 queues after delete = %v, want %v", got, want)
	}
	if got := s.Ports(); len(got) != 1 || got[0].No != 5 || got[0].Name != "b" {
		t.Fatalf("list = %+v, want only b as 5", got)
	}
	if err := s.DelPort(1); !errors.Is(err, dpif.ErrNoSuchPort) {
		t.Fatalf("delete twice: %v, want ErrNoSuchPort", err)
	}
	if _, err := s.AddPort(a, maxPortNo); err == nil {
		t.Fatal("add as port 65536 succeeded")
	}
}
