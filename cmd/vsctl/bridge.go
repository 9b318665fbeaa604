package vsctl

import (
	"sort"

	"github.com/gvs-project/gvs/ovsdb/model"
)

func cmdInit(*invocation) error { return nil } // the Open_vSwitch row always exists

func strDatum(s string) model.Datum { return model.Scalar(s) }

// mustBridge finds a bridge or fails with ovs-vsctl's message.
func (inv *invocation) mustBridge(name string) (*row, error) {
	if br := inv.ctx.bridge(name); br != nil {
		return br, nil
	}
	return nil, fail("no bridge named %s", name)
}

func cmdAddBr(inv *invocation) error {
	dc := inv.ctx
	name := inv.args[0]
	switch len(inv.args) {
	case 2:
		return fail("'add-br' command takes exactly 1 or 3 arguments")
	case 3:
		return fail("fake bridges (add-br BRIDGE PARENT VLAN) are not supported by %s", Program)
	}
	if br := dc.bridge(name); br != nil {
		if inv.has("--may-exist") {
			return nil
		}
		return fail("cannot create a bridge named %s because a bridge named %s already exists", name, name)
	}
	if p := dc.port(name); p != nil {
		owner := "?"
		if br := dc.portBridge(p); br != nil {
			owner = br.str("name")
		}
		return fail("cannot create a bridge named %s because a port named %s already exists on bridge %s", name, name, owner)
	}
	iface := dc.insert("Interface", model.UUID{})
	iface.set("name", strDatum(name))
	iface.set("type", strDatum("internal"))
	port := dc.insert("Port", model.UUID{})
	port.set("name", strDatum(name))
	port.set("interfaces", model.Scalar(iface.uuid))
	br := dc.insert("Bridge", model.UUID{})
	br.set("name", strDatum(name))
	br.set("ports", model.Scalar(port.uuid))
	dc.ovs.set("bridges", addRef(dc.ovs.get("bridges"), br.uuid))
	return nil
}

// deletePort removes port p (and its interfaces) from bridge br.
func (dc *dbctx) deletePort(br, p *row) {
	for _, id := range p.refs("interfaces") {
		if i := dc.row("Interface", id); i != nil {
			dc.delete(i)
		}
	}
	br.set("ports", removeRef(br.get("ports"), p.uuid))
	dc.delete(p)
}

func cmdDelBr(inv *invocation) error {
	dc := inv.ctx
	br := dc.bridge(inv.args[0])
	if br == nil {
		if inv.has("--if-exists") {
			return nil
		}
		return fail("no bridge named %s", inv.args[0])
	}
	for _, id := range br.refs("ports") {
		if p := dc.row("Port", id); p != nil {
			dc.deletePort(br, p)
		}
	}
	dc.ovs.set("bridges", removeRef(dc.ovs.get("bridges"), br.uuid))
	dc.delete(br)
	return nil
}

func (inv *invocation) printSorted(names []string) {
	sort.Strings(names)
	for _, n := range names {
		inv.out.WriteString(n + "\n")
	}
}

func cmdListBr(inv *invocation) error {
	if inv.has("--fake") {
		return nil
	}
	var names []string
	for _, br := range inv.ctx.rows("Bridge") {
		if inv.ctx.ovs.get("bridges").Contains(br.uuid) {
			names = append(names, br.str("name"))
		}
	}
	inv.printSorted(names)
	return nil
}

func cmdBrExists(inv *invocation) error {
	if inv.ctx.bridge(inv.args[0]) == nil {
		return &failure{code: 2}
	}
	return nil
}

func cmdListPorts(inv *invocation) error {
	br, err := inv.mustBridge(inv.args[0])
	if err != nil {
		return err
	}
	var names []string
	for _, id := range br.refs("ports") {
		if p := inv.ctx.row("Port", id); p != nil && p.str("name") != br.str("name") {
			names = append(names, p.str("name"))
		}
	}
	inv.printSorted(names)
	return nil
}

func cmdListIfaces(inv *invocation) error {
	br, err := inv.mustBridge(inv.args[0])
	if err != nil {
		return err
	}
	var names []string
	for _, id := range br.refs("ports") {
		p := inv.ctx.row("Port", id)
		if p == nil {
			continue
		}
		for _, iid := range p.refs("interfaces") {
			if i := inv.ctx.row("Interface", iid); i != nil && i.str("name") != br.str("name") {
				names = append(names, i.str("name"))
			}
		}
	}
	inv.printSorted(names)
	return nil
}

func cmdAddPort(inv *invocation) error {
	dc := inv.ctx
	brName, name := inv.args[0], inv.args[1]
	if p := dc.port(name); p != nil {
		owner := dc.portBridge(p)
		ownerName := ""
		if owner != nil {
			ownerName = owner.str("name")
		}
		if inv.has("--may-exist") {
			if ownerName != brName {
				return fail("\"--may-exist add-port %s %s\" but %s is actually attached to bridge %s", brName, name, name, ownerName)
			}
			return nil
		}
		return fail("cannot create a port named %s because a port named %s already exists on bridge %s", name, name, ownerName)
	}
	br, err := inv.mustBridge(brName)
	if err != nil {
		return err
	}
	if i := dc.iface(name); i != nil {
		return fail("cannot create an interface named %s because an interface named %s already exists on bridge %s", name, name, brName)
	}
	iface := dc.insert("Interface", model.UUID{})
	iface.set("name", strDatum(name))
	port := dc.insert("Port", model.UUID{})
	port.set("name", strDatum(name))
	port.set("interfaces", model.Scalar(iface.uuid))
	for _, a := range inv.args[2:] {
		if err := dc.setColumn(port, a); err != nil {
			return err
		}
	}
	br.set("ports", addRef(br.get("ports"), port.uuid))
	return nil
}

func cmdDelPort(inv *invocation) error {
	dc := inv.ctx
	name := inv.args[len(inv.args)-1]
	p := dc.port(name)
	if p == nil && inv.has("--with-iface") {
		if i := dc.iface(name); i != nil {
			p = dc.referrer("Port", "interfaces", i.uuid)
		}
	}
	if p == nil {
		if inv.has("--if-exists") {
			return nil
		}
		if inv.has("--with-iface") {
			return fail("no port or interface named %s", name)
		}
		return fail("no port named %s", name)
	}
	owner := dc.portBridge(p)
	if owner != nil && p.str("name") == owner.str("name") {
		return fail("cannot delete port %s because it is the local port for bridge %s (deleting this port requires deleting the entire bridge)", name, owner.str("name"))
	}
	if len(inv.args) == 2 {
		br, err := inv.mustBridge(inv.args[0])
		if err != nil {
			return err
		}
		if owner != br {
			if owner != nil && p.str("name") == owner.str("name") {
				return fail("bridge %s does not have a port %s (although its parent bridge %s does)", inv.args[0], name, owner.str("name"))
			}
			return fail("bridge %s does not have a port %s", inv.args[0], name)
		}
	}
	if owner == nil {
		dc.delete(p)
		return nil
	}
	dc.deletePort(owner, p)
	return nil
}

func cmdPortToBr(inv *invocation) error {
	p := inv.ctx.port(inv.args[0])
	if p == nil {
		return fail("no port named %s", inv.args[0])
	}
	if br := inv.ctx.portBridge(p); br != nil {
		inv.out.WriteString(br.str("name") + "\n")
	}
	return nil
}

func cmdIfaceToBr(inv *invocation) error {
	i := inv.ctx.iface(inv.args[0])
	if i == nil {
		return fail("no interface named %s", inv.args[0])
	}
	if p := inv.ctx.referrer("Port", "interfaces", i.uuid); p != nil {
		if br := inv.ctx.portBridge(p); br != nil {
			inv.out.WriteString(br.str("name") + "\n")
		}
	}
	return nil
}

// targets returns the target column of the rows a reference column holds.
func (dc *dbctx) targets(r *row, col, table string) []string {
	var out []string
	for _, id := range r.refs(col) {
		if t := dc.row(table, id); t != nil {
			out = append(out, t.str("target"))
		}
	}
	return out
}

// replaceTargets deletes the rows r.col refers to and, for each target,
// creates a new row of table, like set-controller and set-manager.
func (dc *dbctx) replaceTargets(r *row, col, table string, targets []string) {
	for _, id := range r.refs(col) {
		if t := dc.row(table, id); t != nil {
			dc.delete(t)
		}
	}
	d := model.Datum{Keys: []model.Atom{}}
	for _, tg := range targets {
		c := dc.insert(table, model.UUID{})
		c.set("target", strDatum(tg))
		d.Keys = append(d.Keys, c.uuid)
	}
	sortDatum(&d)
	r.set(col, d)
}

func cmdGetController(inv *invocation) error {
	br, err := inv.mustBridge(inv.args[0])
	if err != nil {
		return err
	}
	inv.printSorted(inv.ctx.targets(br, "controller", "Controller"))
	return nil
}

func cmdDelController(inv *invocation) error {
	br, err := inv.mustBridge(inv.args[0])
	if err != nil {
		return err
	}
	inv.ctx.replaceTargets(br, "controller", "Controller", nil)
	return nil
}

func cmdSetController(inv *invocation) error {
	br, err := inv.mustBridge(inv.args[0])
	if err != nil {
		return err
	}
	inv.ctx.replaceTargets(br, "controller", "Controller", inv.args[1:])
	return nil
}

func cmdGetFailMode(inv *invocation) error {
	br, err := inv.mustBridge(inv.args[0])
	if err != nil {
		return err
	}
	if m := br.str("fail_mode"); m != "" {
		inv.out.WriteString(m + "\n")
	}
	return nil
}

func cmdDelFailMode(inv *invocation) error {
	br, err := inv.mustBridge(inv.args[0])
	if err != nil {
		return err
	}
	br.set("fail_mode", model.Datum{Keys: []model.Atom{}})
	return nil
}

func cmdSetFailMode(inv *invocation) error {
	br, err := inv.mustBridge(inv.args[0])
	if err != nil {
		return err
	}
	mode := inv.args[1]
	if mode != "standalone" && mode != "secure" {
		return fail("fail-mode must be \"standalone\" or \"secure\"")
	}
	br.set("fail_mode", strDatum(mode))
	return nil
}

func cmdGetManager(inv *invocation) error {
	inv.printSorted(inv.ctx.targets(inv.ctx.ovs, "manager_options", "Manager"))
	return nil
}

func cmdDelManager(inv *invocation) error {
	inv.ctx.replaceTargets(inv.ctx.ovs, "manager_options", "Manager", nil)
	return nil
}

func cmdSetManager(inv *invocation) error {
	inv.ctx.replaceTargets(inv.ctx.ovs, "manager_options", "Manager", inv.args)
	return nil
}

// gvs has no fake bridges, so every bridge is its own parent on VLAN 0.
func cmdBrToVlan(inv *invocation) error {
	if _, err := inv.mustBridge(inv.args[0]); err != nil {
		return err
	}
	inv.out.WriteString("0\n")
	return nil
}

func cmdBrToParent(inv *invocation) error {
	br, err := inv.mustBridge(inv.args[0])
	if err != nil {
		return err
	}
	inv.out.WriteString(br.str("name") + "\n")
	return nil
}

func cmdBrSetExternalID(inv *invocation) error {
	br, err := inv.mustBridge(inv.args[0])
	if err != nil {
		return err
	}
	key := inv.args[1]
	d := br.get("external_ids").Clone()
	if i := indexOf(d, key); i >= 0 {
		d.Keys = append(d.Keys[:i], d.Keys[i+1:]...)
		d.Values = append(d.Values[:i], d.Values[i+1:]...)
	}
	if len(inv.args) == 3 {
		d.Keys = append(d.Keys, key)
		d.Values = append(d.Values, inv.args[2])
		sortDatum(&d)
	}
	br.set("external_ids", d)
	return nil
}

func cmdBrGetExternalID(inv *invocation) error {
	br, err := inv.mustBridge(inv.args[0])
	if err != nil {
		return err
	}
	d := br.get("external_ids")
	if len(inv.args) == 2 {
		if v, ok := d.Lookup(inv.args[1]); ok {
			inv.out.WriteString(v.(string) + "\n")
		}
		return nil
	}
	for i, k := range d.Keys {
		inv.out.WriteString(k.(string) + "=" + d.Values[i].(string) + "\n")
	}
	return nil
}
