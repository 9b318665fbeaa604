package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gvs-project/gvs/datapath/conntrack"
	"github.com/gvs-project/gvs/datapath/l2fib"
	"github.com/gvs-project/gvs/datapath/netdev"
	"github.com/gvs-project/gvs/ofproto/oftable"
	"github.com/gvs-project/gvs/ovsdb/server"
	"github.com/gvs-project/gvs/vswitchd/backer"
	"github.com/gvs-project/gvs/vswitchd/dpctl"
	"log/slog"
)

// Config is what the metrics listener serves.
type Config struct {
	// Address is HOST:PORT to listen on (":0": a port the kernel picks).
	Address string
	// Switch is the backer whose datapaths, ports, MAC tables and
	// OpenFlow tables are reported.
	Switch *backer.Backer
	// DB is the embedded database server; nil with an external one.
	DB  *server.Server
	Log *slog.Logger
	// Listen opens the listener (a handed-over one in a daemon that took
	// over); nil: net.Listen.
	Listen func(network, address string) (net.Listener, error)
}

// Server is a running metrics listener.
type Server struct {
	ln   net.Listener
	srv  *http.Server
	done chan struct{}
}

// Start listens on cfg.Address and serves /metrics (Prometheus) and
// /debug/pprof/ until Close.
func Start(cfg Config) (*Server, error) {
	reg := prometheus.NewRegistry()
	if err := reg.Register(&collector{sw: cfg.Switch, db: cfg.DB}); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	if err := reg.Register(collectors.NewGoCollector()); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	if err := reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	listen := cfg.Listen
	if listen == nil {
		listen = net.Listen
	}
	ln, err := listen("tcp", cfg.Address)
	if err != nil {
		return nil, fmt.Errorf("metrics: listening on %s: %w", cfg.Address, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	m := &Server{ln: ln, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		if err := m.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			cfg.Log.Error("metrics listener stopped", "err", err)
		}
	}()
	cfg.Log.Info("serving metrics", "address", ln.Addr().String())
	return m, nil
}

// Close stops the listener, letting scrapes under way finish for up to a
// second.
func (m *Server) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if m.srv.Shutdown(ctx) != nil {
		m.srv.Close()
	}
	<-m.done
}

// Addr returns the address the listener is bound to (with the port the
// kernel chose for ":0").
func (m *Server) Addr() net.Addr { return m.ln.Addr() }

// Metric descriptions. Counters end in _total; label sets are fixed per
// metric so that a scrape is self-consistent.
var (
	portLabels = []string{"bridge", "port", "ofport"}

	descDPHits     = prometheus.NewDesc("gvs_datapath_hits_total", "Packets that matched a cached flow, by cache level (emc: exact-match cache, megaflow: megaflow classifier).", []string{"datapath", "cache"}, nil)
	descDPMisses   = prometheus.NewDesc("gvs_datapath_misses_total", "Packets that matched no megaflow and became miss upcalls.", []string{"datapath"}, nil)
	descDPLost     = prometheus.NewDesc("gvs_datapath_lost_total", "Packets dropped because no upcall could be made or it failed.", []string{"datapath"}, nil)
	descDPUpcalls  = prometheus.NewDesc("gvs_datapath_upcalls_total", "Miss upcalls by result (ok, failed).", []string{"datapath", "result"}, nil)
	descDPRecirc   = prometheus.NewDesc("gvs_datapath_recirculations_total", "Recirculation passes.", []string{"datapath"}, nil)
	descDPFlows    = prometheus.NewDesc("gvs_datapath_megaflows", "Megaflows installed in the datapath.", []string{"datapath"}, nil)
	descDPMasks    = prometheus.NewDesc("gvs_datapath_masks", "Distinct megaflow masks (classifier subtables), summed over workers.", []string{"datapath"}, nil)
	descDPLimit    = prometheus.NewDesc("gvs_datapath_flow_limit", "Megaflow limit per poll-mode worker (other_config:flow-limit).", []string{"datapath"}, nil)
	descDPWorkers  = prometheus.NewDesc("gvs_datapath_workers", "Poll-mode workers.", []string{"datapath"}, nil)
	descCTConns    = prometheus.NewDesc("gvs_conntrack_connections", "Tracked connections per zone (zones with connections or a limit).", []string{"datapath", "zone"}, nil)
	descCTLimit    = prometheus.NewDesc("gvs_conntrack_zone_limit", "Connection limit of a zone (0: unlimited), for zones with connections or an explicit limit.", []string{"datapath", "zone"}, nil)
	descCTZRefused = prometheus.NewDesc("gvs_conntrack_zone_refused_total", "Commits refused by the zone's limit, per zone (zones with connections or a limit).", []string{"datapath", "zone"}, nil)
	descCTDefault  = prometheus.NewDesc("gvs_conntrack_default_zone_limit", "Default zone connection limit (0: unlimited).", []string{"datapath"}, nil)
	descCTMax      = prometheus.NewDesc("gvs_conntrack_max_connections", "Global connection limit (dpctl/ct-set-maxconns).", []string{"datapath"}, nil)
	descCTRefused  = prometheus.NewDesc("gvs_conntrack_refused_total", "Commits refused, by reason (global_limit, zone_limit, nat_exhausted).", []string{"datapath", "reason"}, nil)
	descCTInvalid  = prometheus.NewDesc("gvs_conntrack_invalid_total", "Packets marked invalid by connection tracking.", []string{"datapath"}, nil)
	descMACEntries = prometheus.NewDesc("gvs_mac_table_entries", "MAC learning table entries (static included).", []string{"bridge"}, nil)
	descMACStatic  = prometheus.NewDesc("gvs_mac_table_static_entries", "Static MAC learning table entries.", []string{"bridge"}, nil)
	descMACMax     = prometheus.NewDesc("gvs_mac_table_capacity", "MAC learning table capacity (other_config:mac-table-size).", []string{"bridge"}, nil)
	descOFRules    = prometheus.NewDesc("gvs_openflow_rules", "OpenFlow rules per table (tables with rules only).", []string{"bridge", "table"}, nil)
	descOFLookups  = prometheus.NewDesc("gvs_openflow_table_lookups_total", "Lookups in an OpenFlow table by translation (tables with rules only).", []string{"bridge", "table"}, nil)
	descOFMatched  = prometheus.NewDesc("gvs_openflow_table_matches_total", "Lookups in an OpenFlow table that matched a rule (tables with rules only).", []string{"bridge", "table"}, nil)
	descOFPacketIn = prometheus.NewDesc("gvs_openflow_packet_ins_total", "Packet-ins produced by a bridge's pipeline.", []string{"bridge"}, nil)
	descOFUpcalls  = prometheus.NewDesc("gvs_openflow_upcalls_total", "Datapath misses translated by a bridge.", []string{"bridge"}, nil)
	descOFUkeys    = prometheus.NewDesc("gvs_openflow_megaflows_tracked", "Megaflows a bridge tracks for revalidation.", []string{"bridge"}, nil)
	descOVSDBTxn   = prometheus.NewDesc("gvs_ovsdb_transactions_total", "OVSDB transact requests received by the embedded database server.", nil, nil)
	descOVSDBMon   = prometheus.NewDesc("gvs_ovsdb_monitors", "Active OVSDB monitors on the embedded database server.", nil, nil)
	descOVSDBSess  = prometheus.NewDesc("gvs_ovsdb_sessions", "Clients connected to the embedded database server.", nil, nil)
	descOVSDBBack  = prometheus.NewDesc("gvs_ovsdb_backlog_bytes", "Bytes queued for OVSDB clients of the embedded database server.", nil, nil)
	descOVSDBSlow  = prometheus.NewDesc("gvs_ovsdb_slow_clients_dropped_total", "OVSDB clients disconnected for falling too far behind on their monitors.", nil, nil)
	descOFMsgs     = prometheus.NewDesc("gvs_openflow_messages_received_total", "OpenFlow messages a bridge handled, by type (Open vSwitch's OFPRAW name).", []string{"bridge", "type"}, nil)
	descOFErrors   = prometheus.NewDesc("gvs_openflow_errors_sent_total", "OpenFlow error replies a bridge sent for messages it could not apply.", []string{"bridge"}, nil)
	descCTFlushes  = prometheus.NewDesc("gvs_conntrack_zone_flushes_total", "Flushes of a zone (NXT_CT_FLUSH_ZONE, flush-conntrack zone=N), per zone.", []string{"datapath", "zone"}, nil)
)

// portCounters and macCounters list the counters each metric family is
// made of: name suffix, help, and how to read it.
type portCounter struct {
	desc *prometheus.Desc
	get  func(*netdev.Stats) uint64
}

func newPortCounter(name, help string, get func(*netdev.Stats) uint64) portCounter {
	return portCounter{prometheus.NewDesc("gvs_port_"+name+"_total", help, portLabels, nil), get}
}

var portCounters = []portCounter{
	newPortCounter("rx_packets", "Packets received on the port.", func(s *netdev.Stats) uint64 { return s.RxPackets }),
	newPortCounter("rx_bytes", "Bytes received on the port.", func(s *netdev.Stats) uint64 { return s.RxBytes }),
	newPortCounter("rx_dropped", "Received packets dropped.", func(s *netdev.Stats) uint64 { return s.RxDropped }),
	newPortCounter("rx_errors", "Receive errors.", func(s *netdev.Stats) uint64 { return s.RxErrors }),
	newPortCounter("tx_packets", "Packets sent on the port.", func(s *netdev.Stats) uint64 { return s.TxPackets }),
	newPortCounter("tx_bytes", "Bytes sent on the port.", func(s *netdev.Stats) uint64 { return s.TxBytes }),
	newPortCounter("tx_dropped", "Packets dropped on transmit.", func(s *netdev.Stats) uint64 { return s.TxDropped }),
	newPortCounter("tx_errors", "Transmit errors.", func(s *netdev.Stats) uint64 { return s.TxErrors }),
}

type macCounter struct {
	desc *prometheus.Desc
	get  func(*l2fib.Stats) uint64
}

func newMACCounter(name, help string, get func(*l2fib.Stats) uint64) macCounter {
	return macCounter{prometheus.NewDesc("gvs_mac_table_"+name+"_total", help, []string{"bridge"}, nil), get}
}

var macCounters = []macCounter{
	newMACCounter("learned", "MAC addresses learned.", func(s *l2fib.Stats) uint64 { return s.Learned }),
	newMACCounter("expired", "MAC entries removed by aging.", func(s *l2fib.Stats) uint64 { return s.Expired }),
	newMACCounter("evicted", "MAC entries evicted to make room.", func(s *l2fib.Stats) uint64 { return s.Evicted }),
	newMACCounter("moved", "MAC entries that moved to another port.", func(s *l2fib.Stats) uint64 { return s.Moved }),
	newMACCounter("flooded", "Packets the mac_learn action flooded (unknown, broadcast or multicast destination); NORMAL translated per MAC address floods in its megaflows' actions, which are not counted here.", func(s *l2fib.Stats) uint64 { return s.Flooded }),
	newMACCounter("unicast", "Packets forwarded to a learned port.", func(s *l2fib.Stats) uint64 { return s.Unicast }),
}

// collector reads the switch's and the database's counters on every scrape.
type collector struct {
	sw *backer.Backer
	db *server.Server
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, pc := range portCounters {
		ch <- pc.desc
	}
	for _, mc := range macCounters {
		ch <- mc.desc
	}
	for _, d := range []*prometheus.Desc{descDPHits, descDPMisses, descDPLost, descDPUpcalls, descDPRecirc,
		descDPFlows, descDPMasks, descDPLimit, descDPWorkers, descCTConns, descCTLimit, descCTZRefused,
		descCTDefault, descCTMax, descCTRefused, descCTInvalid, descMACEntries, descMACStatic, descMACMax,
		descOFRules, descOFLookups, descOFMatched, descOFPacketIn, descOFUpcalls, descOFUkeys, descOVSDBTxn,
		descOVSDBMon, descOVSDBSess, descOVSDBBack, descOVSDBSlow, descOFMsgs, descOFErrors, descCTFlushes} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for _, p := range c.sw.View().PortSamples() {
		of := strconv.FormatInt(p.OFPort, 10)
		for _, pc := range portCounters {
			counter(pc.desc, pc.get(&p.Stats), p.Bridge, p.Port, of)
		}
	}
	for _, dp := range c.sw.Datapaths() {
		name := dpctl.DPName(dp)
		s := dp.Stats()
		counter(descDPHits, s.EMCHit, name, "emc")
		counter(descDPHits, s.MegaflowHit, name, "megaflow")
		counter(descDPMisses, s.Missed, name)
		counter(descDPLost, s.Lost, name)
		counter(descDPUpcalls, s.UpcallOK, name, "ok")
		counter(descDPUpcalls, s.UpcallFail, name, "failed")
		counter(descDPRecirc, s.Recirc, name)
		gauge(descDPFlows, float64(s.Flows), name)
		gauge(descDPMasks, float64(s.Masks), name)
		gauge(descDPLimit, float64(dp.Config().FlowLimit), name)
		gauge(descDPWorkers, float64(dp.Workers()), name)
		collectConntrack(dp.Conntrack(), name, counter, gauge)
	}
	for _, m := range c.sw.View().MACTables() {
		s := m.Table.Stats()
		gauge(descMACEntries, float64(s.Current), m.Bridge)
		gauge(descMACStatic, float64(s.Static), m.Bridge)
		gauge(descMACMax, float64(s.Max), m.Bridge)
		for _, mc := range macCounters {
			counter(mc.desc, mc.get(&s), m.Bridge)
		}
	}
	for _, b := range c.sw.View().OFBridges() {
		bc := b.Counters()
		counter(descOFPacketIn, bc.PacketIns, b.Name())
		counter(descOFUpcalls, bc.Upcalls, b.Name())
		gauge(descOFUkeys, float64(bc.Ukeys), b.Name())
		b.MessagesReceived(func(name string, n uint64) { counter(descOFMsgs, n, b.Name(), name) })
		counter(descOFErrors, b.ErrorsSent(), b.Name())
		t := b.Tables()
		for i := 0; i < oftable.NumTables; i++ {
			st := t.Stats(uint8(i))
			if st.Active == 0 {
				continue
			}
			table := strconv.Itoa(i)
			gauge(descOFRules, float64(st.Active), b.Name(), table)
			counter(descOFLookups, st.Lookups, b.Name(), table)
			counter(descOFMatched, st.Matched, b.Name(), table)
		}
	}
	if c.db != nil {
		counter(descOVSDBTxn, c.db.Transactions())
		gauge(descOVSDBMon, float64(c.db.Monitors()))
		gauge(descOVSDBSess, float64(c.db.Sessions()))
		gauge(descOVSDBBack, float64(c.db.Backlog()))
		counter(descOVSDBSlow, c.db.SlowClientsDropped())
	}
}

// collectConntrack reports the tracker's totals and, per zone, the zones
// that have connections or an explicit limit. Finding the zones in use
// walks the tracker's 65,536 zone pointers: tens of microseconds per
// scrape, nothing on the packet path.
func collectConntrack(ct *conntrack.Tracker, dp string,
	counter func(*prometheus.Desc, uint64, ...string), gauge func(*prometheus.Desc, float64, ...string)) {
	if ct == nil {
		return
	}
	st := ct.Stats()
	def, limited := ct.Limits()
	gauge(descCTDefault, float64(def), dp)
	gauge(descCTMax, float64(ct.MaxConns()), dp)
	counter(descCTRefused, st.Full, dp, "global_limit")
	counter(descCTRefused, st.ZoneFull, dp, "zone_limit")
	counter(descCTRefused, st.NATExhausted, dp, "nat_exhausted")
	counter(descCTInvalid, st.Invalid, dp)
	explicit := make(map[uint16]uint32, len(limited))
	for _, l := range limited {
		explicit[l.Zone] = l.Limit
	}
	for z := 0; z < conntrack.NumZones; z++ {
		zone := uint16(z)
		n := ct.ZoneCount(zone)
		lim, has := explicit[zone]
		flushes := ct.ZoneFlushes(zone)
		if n == 0 && !has && flushes == 0 {
			continue
		}
		if !has {
			lim = def
		}
		label := strconv.Itoa(z)
		gauge(descCTConns, float64(n), dp, label)
		gauge(descCTLimit, float64(lim), dp, label)
		counter(descCTZRefused, ct.ZoneRefused(zone), dp, label)
		counter(descCTFlushes, uint64(flushes), dp, label)
	}
}
