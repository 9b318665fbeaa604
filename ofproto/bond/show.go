package bond

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/gvs-project/gvs/internal/ethaddr"
)

// Registry holds a switch's bonds and serves the bond/ commands.
type Registry struct {
	mu    sync.Mutex
	bonds []*Bond
}

// Add registers b.
func (r *Registry) Add(b *Bond) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.bonds = append(r.bonds, b)
}

// Remove unregisters b.
func (r *Registry) Remove(b *Bond) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.bonds = slices.DeleteFunc(r.bonds, func(x *Bond) bool { return x == b })
}

// Lookup finds a bond by name.
func (r *Registry) Lookup(name string) *Bond {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, b := range r.bonds {
		if b.Name() == name {
			return b
		}
	}
	return nil
}

func (r *Registry) all() []*Bond {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.bonds)
}

var (
	errNoBond   = errors.New("no such bond")
	errNoMember = errors.New("no such member")
)

// ListCommand is bond/list.
func (r *Registry) ListCommand([]string) (string, error) {
	var s strings.Builder
	s.WriteString("bond\ttype\trecircID\tmembers\n")
	for _, b := range r.all() {
		b.mu.Lock()
		names := make([]string, len(b.members))
		for i, m := range b.members {
			names[i] = m.name
		}
		fmt.Fprintf(&s, "%s\t%s\t%d\t%s\n", b.set.Name, b.set.Mode, b.recircID, strings.Join(names, ", "))
		b.mu.Unlock()
	}
	return s.String(), nil
}

// ShowCommand is bond/show [port].
func (r *Registry) ShowCommand(args []string) (string, error) {
	if len(args) > 0 {
		b := r.Lookup(args[0])
		if b == nil {
			return "", errNoBond
		}
		return b.Show(), nil
	}
	var s strings.Builder
	for _, b := range r.all() {
		s.WriteString(b.Show())
	}
	return s.String(), nil
}

func (r *Registry) bondMember(args []string) (*Bond, *member, error) {
	b := r.Lookup(args[0])
	if b == nil {
		return nil, nil, errNoBond
	}
	b.mu.Lock()
	m := b.lookup(args[len(args)-1])
	if m == nil {
		b.mu.Unlock()
		return nil, nil, errNoMember
	}
	return b, m, nil // locked
}

// MigrateCommand is bond/migrate port hash member (balance-slb only).
func (r *Registry) MigrateCommand(args []string) (string, error) {
	b := r.Lookup(args[0])
	if b == nil {
		return "", errNoBond
	}
	if b.Mode() != BalanceSLB {
		return "", errors.New("not an SLB bond")
	}
	h, err := strconv.ParseUint(args[1], 10, 64)
	if err != nil || strings.ContainsAny(args[1], "+-") {
		return "", errors.New("bad hash")
	}
	b, m, err := r.bondMember([]string{args[0], args[2]})
	if err != nil {
		return "", err
	}
	defer b.mu.Unlock()
	if !m.enabled {
		return "", errors.New("cannot migrate to disabled member")
	}
	if b.hash != nil {
		b.hash[h%Buckets].member = m
	}
	b.revalidate = true
	return "migrated", nil
}

// SetActiveMemberCommand is bond/set-active-member port member.
func (r *Registry) SetActiveMemberCommand(args []string) (string, error) {
	b, m, err := r.bondMember(args)
	if err != nil {
		return "", err
	}
	defer b.mu.Unlock()
	if !m.enabled {
		return "", errors.New("cannot make disabled member active")
	}
	if b.active == m {
		return "no change", nil
	}
	b.active = m
	b.env.Log.Info(fmt.Sprintf("bond %s: active member is now %s", b.set.Name, m.name))
	b.sendLearning = true
	b.activeChanged()
	return "done", nil
}

// EnableMemberCommand is bond/enable-member port member.
func (r *Registry) EnableMemberCommand(args []string) (string, error) {
	return r.setEnabled(args, true)
}

// DisableMemberCommand is bond/disable-member port member.
func (r *Registry) DisableMemberCommand(args []string) (string, error) {
	return r.setEnabled(args, false)
}

func (r *Registry) setEnabled(args []string, on bool) (string, error) {
	b, m, err := r.bondMember(args)
	if err != nil {
		return "", err
	}
	defer b.mu.Unlock()
	b.enable(m, on)
	if on {
		return "enabled", nil
	}
	return "disabled", nil
}

// HashCommand is bond/hash mac [vlan] [basis]: the balance-slb bucket.
func HashCommand(args []string) (string, error) {
	var vlan, basis uint32
	var ok bool
	if len(args) > 1 {
		if vlan, ok = scanUint(args[1]); !ok {
			return "", errors.New("invalid vlan")
		}
	}
	if len(args) > 2 {
		if basis, ok = scanUint(args[2]); !ok {
			return "", errors.New("invalid basis")
		}
	}
	mac, ok := ethaddr.Scan(args[0])
	if !ok {
		return "", errors.New("invalid mac")
	}
	return strconv.Itoa(int(HashMAC(mac, uint16(vlan), basis) % Buckets)), nil
}

// scanUint reads an unsigned number as sscanf's %u does: leading spaces,
// an optional sign (a negative number wraps), at least one digit, and
// whatever follows ignored.
func scanUint(s string) (uint32, bool) {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg, s = s[0] == '-', s[1:]
	}
	n := 0
	var v uint32
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		v = v*10 + uint32(s[n]-'0')
		n++
	}
	if n == 0 {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

// Show is the bond's bond/show text.
func (b *Bond) Show() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var s strings.Builder
	fmt.Fprintf(&s, "---- %s ----\nbond_mode: %s\n", b.set.Name, b.set.Mode)
	mayRecirc := b.set.Mode == BalanceTCP && b.recircID != 0 && !b.fallingBackToAB()
	recirc := -1
	if mayRecirc {
		recirc = int(b.recircID)
	}
	fmt.Fprintf(&s, "bond may use recirculation: %s, Recirc-ID : %d\n", yesNo(mayRecirc), recirc)
	fmt.Fprintf(&s, "bond-hash-basis: %d\n", b.set.Basis)
	lb, lbID := "disabled", -1
	if b.set.UseLBOutput {
		lb, lbID = "enabled", int(b.recircID)
	}
	fmt.Fprintf(&s, "lb_output action: %s, bond-id: %d\n", lb, lbID)
	if b.set.Mode == BalanceSLB {
		fmt.Fprintf(&s, "all members active: %t\n", b.set.AllMembersActive)
	}
	fmt.Fprintf(&s, "updelay: %d ms\ndowndelay: %d ms\n", b.set.UpDelay, b.set.DownDelay)
	if b.balanced() {
		fmt.Fprintf(&s, "next rebalance: %d ms\n", b.nextRebal-b.now())
	}
	fmt.Fprintf(&s, "lacp_status: %s\nlacp_fallback_ab: %t\n", b.lacpStatus, b.set.LACPFallbackAB)
	primary := "<none>"
	if b.set.Primary != "" {
		primary = b.set.Primary
		if !slices.ContainsFunc(b.members, func(m *member) bool { return m.primary }) {
			primary += " (no such member)"
		}
	}
	fmt.Fprintf(&s, "active-backup primary: %s\n", primary)
	who := "none"
	if m := b.memberByMAC(b.activeMAC); m != nil {
		who = m.name
	}
	fmt.Fprintf(&s, "active member mac: %s(%s)\n", ethaddr.String(b.activeMAC), who)
	ms := slices.Clone(b.members)
	slices.SortFunc(ms, func(x, y *member) int { return strings.Compare(x.name, y.name) })
	for _, m := range ms {
		fmt.Fprintf(&s, "\nmember %s: %s\n", m.name, map[bool]string{true: "enabled", false: "disabled"}[m.enabled])
		if m == b.active {
			s.WriteString("  active member\n")
		}
		if m.delayExpires != never {
			d := "updelay"
			if m.enabled {
				d = "downdelay"
			}
			fmt.Fprintf(&s, "  %s expires in %d ms\n", d, m.delayExpires-b.now())
		}
		fmt.Fprintf(&s, "  may_enable: %t\n", m.mayEnable)
		if !b.balanced() || b.hash == nil {
			continue
		}
		for i := range b.hash {
			if e := &b.hash[i]; e.member == m && e.txBytes/1024 != 0 {
				fmt.Fprintf(&s, "  hash %d: %d kB load\n", i, e.txBytes/1024)
			}
		}
	}
	s.WriteString("\n")
	return s.String()
}

func yesNo(v bool) string {
	if v {
		return "yes"
	}
	return "no"
}
