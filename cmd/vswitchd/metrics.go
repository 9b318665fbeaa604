package vswitchd

import (
	"net"

	"github.com/gvs-project/gvs/internal/unixsock"

	"github.com/gvs-project/gvs/vswitchd/metrics"
)

// startMetrics serves /metrics on --metrics-address (vswitchd/metrics).
func (d *Daemon) startMetrics() error {
	if d.cfg.MetricsAddress == "" {
		return nil
	}
	mx, err := metrics.Start(metrics.Config{Address: d.cfg.MetricsAddress, Switch: d.sw, DB: d.db, Log: d.log,
		Listen: func(network, addr string) (net.Listener, error) { return unixsock.ListenTCP(network, addr, d.sockPerm) }})
	if err != nil {
		return err
	}
	d.mx = mx
	return nil
}

// MetricsAddr returns the address the metrics listener is bound to (with
// the port the kernel chose for ":0"), or nil when metrics are off.
func (d *Daemon) MetricsAddr() net.Addr {
	if d.mx == nil {
		return nil
	}
	return d.mx.Addr()
}
