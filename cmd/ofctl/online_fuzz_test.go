package ofctl

import (
	"testing"

	"github.com/gvs-project/gvs/ofproto/mf"
)

// FuzzParseFlowReq: any text, for any command and version, parses or
// fails with an error; a parsed request encodes as a flow mod for every
// protocol it is usable with, without panicking.
func FuzzParseFlowReq(f *testing.F) {
	for _, s := range []string{
		"in_port=1,actions=output:2", "cookie=0x5/-1,table=1", "out_port=LOCAL,tcp", "table=255,actions=drop",
		"priority=5,ip,nw_dst=10.0.0.2,actions=mod_dl_dst:aa:bb:cc:dd:ee:ff,output:1", "cookie=5", "in_port=p1,actions=output:p2",
		"ipv6_src=::1,reset_counts,actions=drop", "actions=goto_table:3", "",
	} {
		f.Add(s, uint8(0), uint8(1))
		f.Add(s, uint8(3), uint8(4))
	}
	e := &env{portByName: map[string]uint32{"p1": 1, "p2": 2}}
	f.Fuzz(func(t *testing.T, s string, cmd, v uint8) {
		cmds := []uint8{fcAdd, fcModify, fcModifyStrict, fcDelete, fcDeleteStrict, fcDump}
		vs := []uint8{mf.OF10, mf.OF13, mf.OF14, mf.OF15}
		c, ver := cmds[int(cmd)%len(cmds)], vs[int(v)%len(vs)]
		r, err := parseFlowReq(e.withPortNumbers(s), c, ver)
		if err != nil || c == fcDump {
			return
		}
		usable := r.usable(c)
		for bit := protocols(1); bit <= protoOXM15; bit <<= 1 {
			if usable&bit == 0 {
				continue
			}
			pv := mf.OF10
			if bit >= protoOXM12 {
				pv = mf.OF12
				for b := bit; b > protoOXM12; b >>= 1 {
					pv++
				}
			}
			if pv != ver && !(pv == mf.OF10 && ver == mf.OF10) {
				continue
			}
			_, _ = r.flowMod(c, bit, pv)
		}
	})
}
