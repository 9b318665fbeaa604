package tests

import (
	"testing"
)

// TestActionImplCommandsLikeOpenVSwitch is odp.at "odp-execute - actions
// implementation": the datapath actions' implementations listed, chosen
// and refused with Open vSwitch's replies and log lines.
func TestActionImplCommandsLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	steps := func() []ofStep {
		return []ofStep{
			appctl("odp-execute/action-impl-show"),
			appctl("odp-execute/action-impl-set", "autovalidator"),
			appctl("odp-execute/action-impl-show"),
			appctl("odp-execute/action-impl-set", "autovalidator"),
			appctl("odp-execute/action-impl-set", "invalid_implementation"),
			appctl("odp-execute/action-impl-set"),
			appctl("odp-execute/action-impl-set", "scalar"),
			appctl("odp-execute/action-impl-show"),
			{tool: "log", args: []string{`\|odp_execute`}},
		}
	}
	diffOneBridgeAgainstOpenVSwitch(t, steps, daemonAsOVS)
}
