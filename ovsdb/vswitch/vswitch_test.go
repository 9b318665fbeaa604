package vswitch

import "testing"

func TestSchemaIsOpenVSwitch31(t *testing.T) {
	s, err := Schema()
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != DatabaseName || s.Version != "8.3.1" || len(s.Tables) != 19 {
		t.Errorf("schema %s %s with %d tables", s.Name, s.Version, len(s.Tables))
	}
	if ovs := s.Tables["Open_vSwitch"]; ovs == nil || ovs.MaxRows != 1 || !ovs.IsRoot {
		t.Error("Open_vSwitch table is not a root table with maxRows 1")
	}
	if p := s.Tables["Port"]; p == nil || p.IsRoot {
		t.Error("Port table should not be a root table")
	}
}
