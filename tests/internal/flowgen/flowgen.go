// Package flowgen generates the OpenFlow rule sets gvs's tests and
// benchmarks load into both switches (ovs-ofctl's flow syntax). It owns
// only text generation and must not import gvs.
package flowgen

import (
	"fmt"
	"strings"
)

// Mixed returns n rules in ovs-ofctl's flow syntax, deterministic and
// pairwise distinct, shaped like a small pipeline:
//
//	table 0 (20%): in_port + dl_dst -> resubmit(,1)
//	table 1 (30%): ip + nw_dst/24 -> load reg0, resubmit(,2)
//	table 2 (30%): tcp + nw_src + tp_dst -> load reg1, resubmit(,3)
//	table 3 (20%): reg0+reg1 exact, or reg0 with a mask -> output
//
// Every rule has its own cookie.
func Mixed(n int) []byte {
	var b strings.Builder
	n0, n1, n2 := n/5, n*3/10, n*3/10
	n3 := n - n0 - n1 - n2
	cookie := 0x1000
	for i := range n0 {
		cookie++
		fmt.Fprintf(&b, "table=0,cookie=%#x,priority=300,in_port=%d,dl_dst=02:00:%02x:%02x:%02x:%02x,actions=resubmit(,1)\n",
			cookie, i%3+1, byte(i>>24), byte(i>>16), byte(i>>8), byte(i))
	}
	for i := range n1 {
		cookie++
		fmt.Fprintf(&b, "table=1,cookie=%#x,priority=200,ip,nw_dst=%d.%d.%d.0/24,actions=load:%#x->NXM_NX_REG0[],resubmit(,2)\n",
			cookie, 10+i>>16, byte(i>>8), byte(i), i&0xffff)
	}
	for i := range n2 {
		cookie++
		fmt.Fprintf(&b, "table=2,cookie=%#x,priority=100,tcp,nw_src=172.%d.%d.%d,tp_dst=%d,actions=load:%#x->NXM_NX_REG1[0..15],resubmit(,3)\n",
			cookie, 16+i>>16, byte(i>>8), byte(i), 1+i%1000, i&0xffff)
	}
	for i := range n3 {
		cookie++
		if i%2 == 0 {
			fmt.Fprintf(&b, "table=3,cookie=%#x,priority=50,reg0=%#x,reg1=%#x,actions=output:%d\n",
				cookie, i, (i*7)&0xffff, i%3+1)
		} else {
			fmt.Fprintf(&b, "table=3,cookie=%#x,priority=40,reg0=%#x/0xffffff00,actions=output:%d\n",
				cookie, i<<8, i%3+1)
		}
	}
	return []byte(b.String())
}
