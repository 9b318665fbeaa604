package oftable_test

import (
	"testing"
	"time"

	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/oftable"
)

type commitReport struct {
	tag     any
	changes []oftable.Change
}

func watchCommits(tb *oftable.Tables) *[]commitReport {
	var got []commitReport
	tb.OnCommit(func(tag any, ch []oftable.Change) {
		got = append(got, commitReport{tag, append([]oftable.Change(nil), ch...)})
	})
	return &got
}

// TestOnCommitReportsChangesInFlowModOrder checks the hook's view of a
// transaction: an add, a replacing add, a modify and a delete, each with
// its Apply index, the replaced or modified rule and the removal reason;
// an aborted transaction and a no-op report nothing.
func TestOnCommitReportsChangesInFlowModOrder(t *testing.T) {
	c := newClock()
	tb := newTables(t, c)
	got := watchCommits(tb)
	m1, m2 := ipDst(t, 0x0a000001, 32), ipDst(t, 0x0a000002, 32)
	apply(t, tb, add(m1, 10, 1, output(1)))
	x := tb.Begin()
	x.Tag = "req"
	for _, fm := range []*oftable.FlowMod{
		add(m2, 10, 2, output(2)),
		add(m1, 10, 3, output(3)),
		cmd(ofp.FlowModify, 0xff, m2, 0, output(4)),
		cmd(ofp.FlowDelete, 0xff, m1, 0),
	} {
		if err := x.Apply(fm); err != nil {
			t.Fatal(err)
		}
	}
	x.Commit()
	x = tb.Begin()
	_ = x.Apply(add(m2, 1, 0))
	x.Abort()
	apply(t, tb, cmd(ofp.FlowDelete, 0xff, ipDst(t, 0x0b000000, 8), 0))
	if len(*got) != 2 {
		t.Fatalf("%d reports, want 2 (the add, the transaction)", len(*got))
	}
	r := (*got)[1]
	if r.tag != "req" || len(r.changes) != 4 {
		t.Fatalf("report %+v", r)
	}
	want := []struct{ kind, op, reason int }{
		{oftable.ChangeAdded, 0, 0}, {oftable.ChangeAdded, 1, 0},
		{oftable.ChangeModified, 2, 0}, {oftable.ChangeRemoved, 3, oftable.RemovedDelete},
	}
	for i, w := range want {
		ch := r.changes[i]
		if ch.Kind != w.kind || ch.Op != w.op || ch.Reason != w.reason {
			t.Errorf("change %d: kind %d op %d reason %d, want %+v", i, ch.Kind, ch.Op, ch.Reason, w)
		}
	}
	if r.changes[1].Old != (*got)[0].changes[0].Rule {
		t.Error("the replacing add does not name the replaced rule")
	}
	if r.changes[2].Old != r.changes[0].Rule || ports(r.changes[2].Rule)[0] != 4 {
		t.Error("the modify does not name the rule it changed")
	}
	if r.changes[3].Rule != r.changes[1].Rule {
		t.Error("the delete does not name the replacing rule")
	}
}

// TestOnCommitReportsExpiryAndRemoveReason checks that expiry and a
// delete with its own reason (a group delete) reach the hook with their
// reasons and no tag, and that a failing flow_mod reports nothing.
func TestOnCommitReportsExpiryAndRemoveReason(t *testing.T) {
	c := newClock()
	tb := newTables(t, c)
	got := watchCommits(tb)
	hard := add(ipDst(t, 0x0a000001, 32), 10, 0, output(1))
	hard.HardTimeout = 5
	apply(t, tb, hard, add(ipDst(t, 0x0a000002, 32), 10, 0, output(2)))
	c.advance(6 * time.Second)
	tb.Expire(c.now())
	gd := cmd(ofp.FlowDelete, 0xff, ipDst(t, 0x0a000002, 32), 0)
	gd.RemoveReason = oftable.RemovedGroupDelete
	rs := apply(t, tb, gd)
	if len(rs) != 1 || rs[0].Reason != oftable.RemovedGroupDelete {
		t.Errorf("flow_removed %+v, want reason group_delete", rs)
	}
	x := tb.Begin()
	if err := x.Apply(cmd(ofp.FlowAdd, oftable.TableInternal, ipDst(t, 0x0a000003, 32), 1)); err == nil {
		t.Fatal("add to the internal table succeeded")
	}
	x.Commit()
	if len(*got) != 3 {
		t.Fatalf("%d reports, want 3", len(*got))
	}
	exp, del := (*got)[1], (*got)[2]
	if exp.tag != nil || len(exp.changes) != 1 || exp.changes[0].Reason != oftable.RemovedHardTimeout || exp.changes[0].Op != -1 {
		t.Errorf("expiry report %+v", exp)
	}
	if len(del.changes) != 1 || del.changes[0].Reason != oftable.RemovedGroupDelete {
		t.Errorf("group delete report %+v", del)
	}
}
