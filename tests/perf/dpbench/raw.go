package main

import (
	"os"
	"os/signal"
	"runtime"
	"sync/atomic"
	"syscall"

	"github.com/gvs-project/gvs/datapath/netdev/afpacket"
	"github.com/gvs-project/gvs/datapath/packet"
)

// rawMain is the bare forwarder (-mode raw, inside nsSwitch): gvs's
// AF_PACKET ports on pg and ps, each batch received on one sent on the
// other as it is, until SIGTERM. It is the ceiling of these ports for any
// userspace forwarder on the same core.
func rawMain() error {
	runtime.LockOSThread()
	in, err := afpacket.Open(afpacket.Config{Name: portGenIf})
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := afpacket.Open(afpacket.Config{Name: portSinkIf})
	if err != nil {
		return err
	}
	defer out.Close()
	var quit atomic.Bool
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	go func() { <-sig; quit.Store(true) }()
	pool := packet.NewPool(4 * packet.BatchSize)
	var b packet.Batch
	for !quit.Load() {
		// Both ways, as a switch polls both ports (TCP's
		// acknowledgements come back from ps).
		if n, _ := in.Recv(0, &b, pool); n > 0 {
			out.Send(0, &b, pool)
		}
		if n, _ := out.Recv(0, &b, pool); n > 0 {
			in.Send(0, &b, pool)
		}
	}
	return nil
}
