package xlate

import "github.com/gvs-project/gvs/ofproto/ofp"

// The load-balancing family's translation (see package ofp's
// actions_bundle.go and bundle.go for the implementation): bundle,
// bundle_load and multipath.

func init() {
	registerHooks(map[ofp.ActionType]actionHook{
		ofp.ActBundle:    bundle,
		ofp.ActMultipath: multipath,
	})
}
