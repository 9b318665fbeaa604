package ofp

// The stack family: push and pop of a subfield on the translation's
// stack. Action fields: push has Src, pop Dst.

func init() {
	registerKinds(map[ActionType]kindOps{
		ActStackPush: {
			forms: func(a *Action, v uint8) ([]Action, error) { return oneForm(a, v, RawActNXAST_STACK_PUSH) },
			check: func(c *checker, a *Action, _ int) error { return c.sub(a.Src, "push") },
		},
		ActStackPop: {
			forms: func(a *Action, v uint8) ([]Action, error) { return oneForm(a, v, RawActNXAST_STACK_POP) },
			check: func(c *checker, a *Action, _ int) error { return c.sub(a.Dst, "pop") },
		},
	})
}
