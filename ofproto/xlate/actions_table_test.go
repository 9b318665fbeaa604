package xlate

import (
	"testing"

	"github.com/gvs-project/gvs/ofproto/ofp"
)

// TestEveryActionKindTranslatesButTheUnsupported: each kind has a
// translation hook registered by its family file, except raw actions,
// nat outside ct and dec_nsh_ttl, which fail translation as unsupported.
func TestEveryActionKindTranslatesButTheUnsupported(t *testing.T) {
	unsupported := map[ofp.ActionType]bool{ofp.ActRaw: true, ofp.ActNAT: true, ofp.ActDecNSHTTL: true}
	for k := ofp.ActionType(0); k < ofp.NumActionTypes; k++ {
		if has := hookOf(k) != nil; has == unsupported[k] {
			t.Errorf("%s: hook registered %v, want %v", k, has, !unsupported[k])
		}
	}
}
