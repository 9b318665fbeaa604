package dpiftest

import (
	"errors"
	"testing"

	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/odp"
)

type handler struct {
	acts      odp.Actions
	install   bool
	userspace int
}

func (h *handler) Miss(u *dpif.Upcall, r *dpif.MissReply) error {
	r.Actions, r.Install = h.acts, h.install
	r.Mask.InPort = ^uint32(0)
	return nil
}

func (h *handler) Userspace(*dpif.Upcall) { h.userspace++ }

func TestMissInstallsRecordsAndExecutes(t *testing.T) {
	dp := New("test")
	acts := odp.Actions{{Kind: odp.KindOutput, Arg: 2}}
	h := &handler{acts: acts, install: true}
	dp.SetUpcallHandler(h)
	var k flow.Key
	k.InPort = 1
	k.EthType = 0x0800
	if _, err := dp.Miss(k, []byte{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	puts := dp.Puts()
	if len(puts) != 1 || puts[0].Flags != dpif.PutCreate || puts[0].Actions.String() != acts.String() {
		t.Fatalf("puts = %+v, want one create with %s", puts, acts)
	}
	fs := dp.Flows()
	if len(fs) != 1 || fs[0].Match.Key.InPort != 1 || fs[0].Match.Key.EthType != 0 {
		t.Fatalf("flows = %+v, want the key under the in_port mask", fs)
	}
	if ex := dp.Executes(); len(ex) != 1 || string(ex[0].Data) != "\x01\x02\x03" {
		t.Fatalf("executes = %+v", ex)
	}
	if !dp.SetFlowStats(fs[0].UFID, dpif.FlowStats{Packets: 3, Bytes: 180}) {
		t.Fatal("SetFlowStats: no flow")
	}
	if st, err := dp.FlowDel(fs[0].UFID); err != nil || st.Packets != 3 {
		t.Fatalf("FlowDel = %+v, %v", st, err)
	}
	if _, err := dp.FlowDel(fs[0].UFID); !errors.Is(err, dpif.ErrNotFound) {
		t.Fatalf("second FlowDel: %v, want ErrNotFound", err)
	}
	if n := len(dp.Dels()); n != 2 {
		t.Fatalf("%d deletes recorded, want 2", n)
	}
	dp.Userspace(k, nil, nil)
	if h.userspace != 1 {
		t.Fatalf("userspace upcalls = %d, want 1", h.userspace)
	}
}

func TestPutModifyAndLimit(t *testing.T) {
	dp := New("test")
	dp.SetFlowLimit(1)
	var k flow.Key
	k.InPort = 1
	m := flow.Match{Key: k}
	m.Mask.InPort = ^uint32(0)
	if err := dp.FlowPut(&dpif.FlowPut{Match: m, Flags: dpif.PutModify}); !errors.Is(err, dpif.ErrNotFound) {
		t.Fatalf("modify of absent flow: %v", err)
	}
	if err := dp.FlowPut(&dpif.FlowPut{Match: m, Flags: dpif.PutCreate}); err != nil {
		t.Fatal(err)
	}
	if err := dp.FlowPut(&dpif.FlowPut{Match: m, Flags: dpif.PutCreate}); !errors.Is(err, dpif.ErrExists) {
		t.Fatalf("second create: %v", err)
	}
	m.Key.InPort = 2
	if err := dp.FlowPut(&dpif.FlowPut{Match: m, Flags: dpif.PutCreate}); !errors.Is(err, dpif.ErrFlowLimit) {
		t.Fatalf("create over the limit: %v", err)
	}
	if dp.FlowCount() != 1 || dp.ConfiguredFlowLimit() != 1 || dp.Stats().Flows != 1 {
		t.Fatalf("count %d limit %d", dp.FlowCount(), dp.ConfiguredFlowLimit())
	}
}
