package odp_test

import (
	"testing"

	"github.com/gvs-project/gvs/datapath/odp"
)

func TestMACLearnTextRoundTrips(t *testing.T) {
	for in, want := range map[string]string{
		"mac_learn(table=1)": "mac_learn(table=1)",
		"mac_learn()":        "mac_learn(table=0)",
		"mac_learn(table=2,vlan=10,in_tagged,ports(1,2:tagged,3))":                                            "mac_learn(table=2,vlan=10,in_tagged,ports(1,2:tagged,3))",
		"mac_learn(ports(3,1:tagged),table=0x5,vlan=0)":                                                       "mac_learn(table=5,ports(1:tagged,3))",
		"mac_learn(table=1,ports())":                                                                          "mac_learn(table=1)",
		"mac_learn(table=3,drop_if_moved,learn_port=4293787649,ports(2,4293787649:tagged:out=0x6))":           "mac_learn(table=3,learn_port=4293787649,drop_if_moved,ports(2,4293787649:tagged:out=6))",
		"mac_learn(table=3,learn_port=4293918722,ports(1,4293918721:tagged:recirc=0x1f,4293918723:recirc=7))": "mac_learn(table=3,learn_port=4293918722,ports(1,4293918721:tagged:recirc=0x1f,4293918723:recirc=0x7))",
	} {
		acts, err := odp.ParseActions(in)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if got := acts.String(); got != want {
			t.Errorf("%q printed as %q, want %q", in, got, want)
		}
	}
}

func TestMACLearnParseRejectsBadOptions(t *testing.T) {
	for _, in := range []string{
		"mac_learn(table=x)", "mac_learn(vlan=4096)", "mac_learn(ports(1,1))", "mac_learn(ports(1:recirc=0))", "mac_learn(ports(1:recirc=2:tagged))", "mac_learn(ports(1:recirc=1:recirc=2))", "mac_learn(learn_port=x)", "mac_learn(ports(1:out=0))", "mac_learn(ports(1:recirc=2:out=3))", "mac_learn(ports(1:out=2:out=3))", "mac_learn(drop_if_moved=1)",
		"mac_learn(ports(1:untagged))", "mac_learn(ports(a))", "mac_learn(flood)",
		"mac_learn(table=1,,vlan=2)", "mac_learn(ports(1)x)",
	} {
		if acts, err := odp.ParseActions(in); err == nil {
			t.Errorf("%q parsed as %q, want an error", in, acts.String())
		}
	}
}

func TestMACLearnParamsFind(t *testing.T) {
	a, err := odp.MACLearn(odp.MACLearnParams{Table: 1, Ports: []odp.MACLearnPort{{Port: 9, Tagged: true}, {Port: 2}, {Port: 5}}})
	if err != nil {
		t.Fatal(err)
	}
	for port, want := range map[uint32]bool{2: true, 5: true, 9: true, 1: false, 3: false, 10: false} {
		mp, ok := a.MACLearn.Find(port)
		if ok != want || ok && mp.Port != port {
			t.Errorf("Find(%d) = %+v, %v; want found=%v", port, mp, ok, want)
		}
	}
	if mp, _ := a.MACLearn.Find(9); !mp.Tagged {
		t.Errorf("Find(9) lost the tagged mode")
	}
}
