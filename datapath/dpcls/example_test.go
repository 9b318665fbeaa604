package dpcls_test

import (
	"fmt"

	"github.com/gvs-project/gvs/datapath/dpcls"
	"github.com/gvs-project/gvs/datapath/flow"
)

func Example() {
	type dpFlow struct{ actions string }

	c := dpcls.New[*dpFlow]()
	// in_port=1, ipv4, nw_dst=10.0.1.0/24 -> output:2
	var m flow.Match
	m.Mask.RecircID, m.Mask.InPort, m.Mask.EthType, m.Mask.NwDst = ^uint32(0), ^uint32(0), 0xffff, 0xffffff00
	m.Key.InPort, m.Key.EthType, m.Key.NwDst = 1, flow.EthTypeIPv4, 0x0a000100
	if err := c.Insert(&m, &dpFlow{actions: "2"}); err != nil {
		panic(err)
	}

	var k flow.Key // a packet from port 1 to 10.0.1.7
	k.InPort, k.EthType, k.NwDst, k.NwProto, k.TpDst = 1, flow.EthTypeIPv4, 0x0a000107, flow.IPProtoTCP, 80
	if f, ok := c.Lookup(&k); ok {
		fmt.Println("actions:", f.actions)
	}

	// The worker's exact-match cache in front of the classifier.
	emc := dpcls.NewEMC[*dpFlow](dpcls.EMCConfig{InsertInvProb: 1})
	h := k.Hash(0)
	if _, ok := emc.Lookup(&k, h); !ok {
		f, _ := c.Lookup(&k)
		emc.Insert(&k, h, f)
	}
	f, ok := emc.Lookup(&k, h)
	fmt.Println("emc:", f.actions, ok, "megaflows:", c.Len(), "subtables:", c.Subtables())
	// Output:
	// actions: 2
	// emc: 2 true megaflows: 1 subtables: 1
}
