package metrics

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/ovsdb/bridge"
	"github.com/gvs-project/gvs/vswitchd/backer"
)

// A scrape reports the backer's datapath, its bridge's MAC table and a
// port's counters with their labels, and no database metrics when there
// is no embedded server.
func TestScrapeReportsTheSwitchWithoutADatabase(t *testing.T) {
	discard := func(string) *slog.Logger { return slog.New(slog.DiscardHandler) }
	sw := backer.New(context.Background(), backer.Config{DisableSystem: true, DisableSystemRoute: true, Workers: 1, Logger: discard})
	defer func() { sw.Close(); sw.CloseDatapaths() }()
	if err := sw.AddBridge(&bridge.BridgeConfig{Name: "br0", DatapathType: "dummy", UUID: "5ad515c0-0000-4000-8000-000000000000"}); err != nil {
		t.Fatal(err)
	}
	if _, err := sw.AddPort("br0", &bridge.IfaceConfig{Name: "p1", Type: "dummy"}); err != nil {
		t.Fatal(err)
	}
	m, err := Start(Config{Address: "127.0.0.1:0", Switch: sw, Log: discard("")})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	resp, err := http.Get("http://" + m.Addr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`gvs_datapath_workers{datapath="dummy@ovs-dummy"} 1`,
		`gvs_datapath_megaflows{datapath="dummy@ovs-dummy"} 0`,
		`gvs_mac_table_entries{bridge="br0"} 0`,
		`bridge="br0",ofport="1",port="p1"`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("no %s in:\n%s", want, body)
		}
	}
	if strings.Contains(string(body), "gvs_ovsdb_") {
		t.Error("database metrics without a database")
	}
}
