package xlate_test

import (
	"testing"

	"github.com/gvs-project/gvs/ofproto/xlate"
)

// The expectations below are Open vSwitch 3.1.0's `ovs-appctl
// dpctl/dump-flows` for the oracle bridge (dummy ports, no ifindex) with
//
//	ovs-vsctl -- set Bridge br0 sflow=@s -- --id=@s create sFlow agent=lo targets=\"127.0.0.1:6343\" sampling=4 \
//	  -- set Bridge br0 ipfix=@i -- --id=@i create IPFIX targets=\"127.0.0.1:4739\" sampling=2
//
// and then sampling=1 on both plus a Flow_Sample_Collector_Set id=5, and
// a UDP packet from p1 through "in_port=1,actions=output:2".
const pktSample = "in_port(1),eth(src=50:54:00:00:00:01,dst=50:54:00:00:00:02),eth_type(0x0800)," +
	"ipv4(src=10.0.0.1,dst=10.0.0.2,proto=17,tos=0,ttl=64,frag=no),udp(src=1,dst=2)"

func TestSamplingComposesSFlowAndIPFIXAsOpenVSwitch(t *testing.T) {
	e := newEnv(t, 4, "in_port=1,actions=output:2")
	e.x.SetSampling(&xlate.Sampling{SFlowProbability: xlate.SampleProbability(4), IPFIXProbability: xlate.SampleProbability(2),
		IPFIXInput: true, IPFIXOutput: true, FlowSample: true})
	out := e.translate(key(t, pktSample))
	want := "sample(sample=25.0%,actions(userspace(pid=0,sFlow(vid=0,pcp=0,output=2147483649),actions)))," +
		"sample(sample=50.0%,actions(userspace(pid=0,ipfix(output_port=4294967295))))," +
		"sample(sample=50.0%,actions(userspace(pid=0,ipfix(output_port=2)))),2"
	if got := out.Actions.String(); got != want {
		t.Errorf("actions\n got %s\nwant %s", got, want)
	}
	wantMegaflow(t, key(t, pktSample), out.Mask, "recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth_type(0x0800),ipv4(frag=no)")
}

func TestFlowSampleActionAsOpenVSwitch(t *testing.T) {
	e := newEnv(t, 4, "in_port=1,actions=sample(probability=65535,collector_set_id=5,obs_domain_id=11,obs_point_id=12),"+
		"sample(probability=6553,collector_set_id=5,obs_domain_id=11,obs_point_id=13,sampling_port=2,egress),output:2")
	e.x.SetSampling(&xlate.Sampling{SFlowProbability: xlate.SampleProbability(1), IPFIXProbability: xlate.SampleProbability(1),
		IPFIXInput: true, IPFIXOutput: true, FlowSample: true})
	out := e.translate(key(t, pktSample))
	want := "userspace(pid=0,sFlow(vid=0,pcp=0,output=2147483649),actions),userspace(pid=0,ipfix(output_port=4294967295))," +
		"userspace(pid=0,flow_sample(probability=65535,collector_set_id=5,obs_domain_id=11,obs_point_id=12,output_port=4294967295))," +
		"sample(sample=10.0%,actions(userspace(pid=0,flow_sample(probability=6553,collector_set_id=5,obs_domain_id=11,obs_point_id=13,output_port=2,egress))))," +
		"userspace(pid=0,ipfix(output_port=2)),2"
	if got := out.Actions.String(); got != want {
		t.Errorf("actions\n got %s\nwant %s", got, want)
	}
}

func TestSFlowOutputIsTheIfindexOfASingleOutput(t *testing.T) {
	e := newEnv(t, 4, "in_port=1,actions=output:2", "in_port=2,actions=output:1,output:3", "in_port=3,actions=drop")
	e.x.SetSampling(&xlate.Sampling{SFlowProbability: xlate.SampleProbability(1),
		IfIndex: func(odp uint32) uint32 { return 100 + odp }})
	cases := []struct{ in, want string }{
		{"1", "userspace(pid=0,sFlow(vid=0,pcp=0,output=102),actions),2"},
		{"2", "userspace(pid=0,sFlow(vid=0,pcp=0,output=2147483650),actions),1,3"},
		{"3", "userspace(pid=0,sFlow(vid=0,pcp=0,output=1073742080),actions)"},
	}
	for _, c := range cases {
		k := key(t, "in_port("+c.in+pktSample[len("in_port(1"):])
		if got := e.translate(k).Actions.String(); got != c.want {
			t.Errorf("in_port %s:\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}

func TestNetFlowMakesItsKeyExactAndRecordsTheOutput(t *testing.T) {
	e := newEnv(t, 4, "in_port=1,actions=output:2", "in_port=2,actions=output:1,output:3", "in_port=3,actions=drop")
	e.x.SetSampling(&xlate.Sampling{NetFlow: true})
	out := e.translate(key(t, pktSample))
	// Open vSwitch 3.1.0 with NetFlow on the oracle bridge.
	wantMegaflow(t, key(t, pktSample), out.Mask,
		"recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.0.0.2,proto=17,tos=0/0xfc,frag=no),udp(src=1,dst=2)")
	if got := out.Actions.String(); got != "2" {
		t.Errorf("actions %s, want 2", got)
	}
	for in, want := range map[string]uint16{"1": 2, "2": xlate.NetFlowOutMulti, "3": xlate.NetFlowOutDrop} {
		k := key(t, "in_port("+in+pktSample[len("in_port(1"):])
		if got := e.translate(k).NetFlowOutput; got != want {
			t.Errorf("in_port %s: NetFlowOutput %#x, want %#x", in, got, want)
		}
	}
}

func TestSampleActionWithoutIPFIXDoesNothing(t *testing.T) {
	e := newEnv(t, 4, "in_port=1,actions=sample(probability=65535,collector_set_id=5),output:2")
	if got := e.translate(key(t, pktSample)).Actions.String(); got != "2" {
		t.Errorf("actions %s, want 2", got)
	}
	e.x.SetSampling(&xlate.Sampling{NetFlow: true})
	if got := e.translate(key(t, pktSample)).Actions.String(); got != "2" {
		t.Errorf("with NetFlow only: actions %s, want 2", got)
	}
}

// Open vSwitch 3.1.0 floods from p1 of the oracle bridge (with p3) as
// sFlow(output=2147483651) (three ports) and an IPFIX output sample
// before each output; it lists the ports in its hash order (LOCAL first),
// gvs in port number order.
func TestFloodSamplesEveryOutput(t *testing.T) {
	e := newEnv(t, 4, "in_port=1,actions=FLOOD")
	e.x.SetSampling(&xlate.Sampling{SFlowProbability: xlate.SampleProbability(1), IPFIXProbability: xlate.SampleProbability(1),
		IPFIXInput: true, IPFIXOutput: true, NetFlow: true})
	out := e.translate(key(t, pktSample))
	want := "userspace(pid=0,sFlow(vid=0,pcp=0,output=2147483651),actions),userspace(pid=0,ipfix(output_port=4294967295))," +
		"userspace(pid=0,ipfix(output_port=2)),2,userspace(pid=0,ipfix(output_port=3)),3,userspace(pid=0,ipfix(output_port=100)),100"
	if got := out.Actions.String(); got != want {
		t.Errorf("actions\n got %s\nwant %s", got, want)
	}
	if out.NetFlowOutput != xlate.NetFlowOutFlood {
		t.Errorf("NetFlowOutput %#x, want flood", out.NetFlowOutput)
	}
}

// NORMAL is one mac_learn action whose ports the datapath picks: sFlow
// reports "multiple ports, number unknown" and NetFlow a flood.
func TestNormalSamplesAsMultipleOutputs(t *testing.T) {
	e := newEnv(t, 4, "in_port=1,actions=NORMAL")
	e.x.SetSampling(&xlate.Sampling{SFlowProbability: xlate.SampleProbability(1), NetFlow: true})
	out := e.translate(key(t, pktSample))
	if got, want := out.Actions[0].String(), "userspace(pid=0,sFlow(vid=0,pcp=0,output=2147483648),actions)"; got != want {
		t.Errorf("first action %s, want %s", got, want)
	}
	if out.NetFlowOutput != xlate.NetFlowOutFlood {
		t.Errorf("NetFlowOutput %#x, want flood", out.NetFlowOutput)
	}
}
