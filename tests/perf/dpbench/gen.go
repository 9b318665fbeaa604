package main

import (
	"runtime"
	"time"

	"github.com/gvs-project/gvs/tests/perf/internal/vnet"
)

const genBatch = 64

// genMain is the generator (-mode gen, inside nsGen): it sends the
// pipeline's n frames round-robin through g0 as fast as the socket
// takes them, for d.
func genMain(name string, n int, d time.Duration) error {
	p, err := pipelineByName(name)
	if err != nil {
		return err
	}
	runtime.LockOSThread()
	frames := make([][]byte, n)
	for i := range frames {
		frames[i] = p.frame(i)
	}
	ls, err := vnet.OpenLinkStats(nsGen, ifGen)
	if err != nil {
		return err
	}
	ls.Close()
	tx, err := vnet.OpenTx(nsGen, ls.Ifindex, genBatch)
	if err != nil {
		return err
	}
	defer tx.Close()
	batch := make([][]byte, genBatch)
	next := 0
	end := time.Now().Add(d)
	for i := 0; ; i++ {
		if i%64 == 0 && time.Now().After(end) {
			return nil
		}
		for k := range batch {
			batch[k] = frames[next]
			if next++; next == n {
				next = 0
			}
		}
		if _, err := tx.Send(batch, true); err != nil {
			return err
		}
	}
}
