package odp

import "testing"

func TestParseCtArguments(t *testing.T) {
	acts, err := ParseActions("ct(commit,zone=5,mark=0x1/0xff,label=0x1f/0xf0,nat(src=10.0.0.1-10.0.0.2:100-200,persistent,random),helper=ftp,timeout=tp1)")
	if err != nil {
		t.Fatal(err)
	}
	c := acts[0].Ct
	if !c.Commit || c.Zone != 5 || c.Mark != 1 || c.MarkMask != 0xff || c.Helper != "ftp" || c.Timeout != "tp1" {
		t.Fatalf("ct params %+v", c)
	}
	if c.Label[15] != 0x10 || c.LabelMask[15] != 0xf0 || c.LabelMask[14] != 0 {
		t.Fatalf("label %x/%x", c.Label, c.LabelMask)
	}
	n := c.NAT
	if n == nil || !n.Src || n.Dst || !n.HasAddr || n.IPv6 || n.MinAddr[3] != 1 || n.MaxAddr[3] != 2 ||
		n.MinPort != 100 || n.MaxPort != 200 || !n.Persistent || !n.Random || n.Hash {
		t.Fatalf("nat %+v", n)
	}
	if got := acts.String(); got != "ct(commit,zone=5,mark=0x1/0xff,label=0x1f/0xf0,nat(src=10.0.0.1-10.0.0.2:100-200,persistent,random),helper=ftp,timeout=tp1)" {
		t.Fatalf("format %q", got)
	}
	acts, err = ParseActions("ct(zone=1,nat(dst=[fd00::1]-[fd00::2]:80))")
	if err != nil {
		t.Fatal(err)
	}
	if n := acts[0].Ct.NAT; !n.Dst || !n.IPv6 || n.MaxAddr[15] != 2 || n.MinPort != 80 || n.MaxPort != 80 {
		t.Fatalf("ipv6 nat %+v", n)
	}
	acts, _ = ParseActions("ct(nat)")
	if n := acts[0].Ct.NAT; n == nil || n.Src || n.Dst {
		t.Fatalf("bare nat %+v", n)
	}
	for _, bad := range []string{"ct(mark=x)", "ct(nat(src=10.0.0.2-10.0.0.1))", "ct(nat(src=1.1.1.1:9-8))", "ct(label=0x123456789012345678901234567890123)", "ct(nat(bogus))"} {
		if _, err := ParseActions(bad); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}
