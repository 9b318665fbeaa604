package dpnetdev

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/odp"
)

// A flow put is logged as Open vSwitch's dpif module logs it (its test
// suite greps "put[modify]"): TYPE@NAME, the flags, the key as given
// under its full mask, the actions.
func TestFlowPutLogsAsOpenVSwitchsDpif(t *testing.T) {
	var buf bytes.Buffer
	cfg := dpif.DefaultConfig()
	cfg.PutLog = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key != slog.MessageKey {
				return slog.Attr{}
			}
			return a
		}}))
	dp := New("ovs-dummy", cfg)
	t.Cleanup(func() { dp.Close() })
	m, err := flow.ParseMatch("recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth(src=50:54:00:00:00:09/00:00:00:00:00:00,dst=50:54:00:00:00:0a/00:00:00:00:00:00),eth_type(0x1234)")
	if err != nil {
		t.Fatal(err)
	}
	acts, err := odp.ParseActions("100")
	if err != nil {
		t.Fatal(err)
	}
	if err := dp.FlowPut(&dpif.FlowPut{Match: m, Actions: acts, Flags: dpif.PutCreate}); err != nil {
		t.Fatal(err)
	}
	if err := dp.FlowPut(&dpif.FlowPut{Match: m, Actions: odp.Actions{}, Flags: dpif.PutModify | dpif.PutZeroStats}); err != nil {
		t.Fatal(err)
	}
	const key = "skb_priority(0/0),skb_mark(0/0),ct_state(0/0),ct_zone(0/0),ct_mark(0/0),ct_label(0/0),recirc_id(0),dp_hash(0/0),in_port(1),packet_type(ns=0,id=0),eth(src=50:54:00:00:00:09/00:00:00:00:00:00,dst=50:54:00:00:00:0a/00:00:00:00:00:00),eth_type(0x1234)"
	want := []string{
		`msg="dummy@ovs-dummy: put[create] ` + key + `, actions:100"`,
		`msg="dummy@ovs-dummy: put[modify][zero] ` + key + `, actions:drop"`,
	}
	if got := strings.Split(strings.TrimSpace(buf.String()), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
