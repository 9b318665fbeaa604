package model

import (
	"fmt"
	"sort"
)

// Datum is a column value: a sorted set of keys, with Values parallel to
// Keys when the column is a map.
type Datum struct {
	Keys   []Atom
	Values []Atom
}

// Scalar returns a datum holding one atom.
func Scalar(a Atom) Datum { return Datum{Keys: []Atom{a}} }

// Len is the number of elements (pairs for maps).
func (d Datum) Len() int { return len(d.Keys) }

// DefaultDatum is the default value of a column of type t: min default
// atoms (so an empty set, or one default atom for a scalar).
func DefaultDatum(t *ColumnType) Datum {
	if t.Min == 0 {
		if t.IsMap() {
			return Datum{Keys: []Atom{}, Values: []Atom{}}
		}
		return Datum{Keys: []Atom{}}
	}
	d := Datum{Keys: []Atom{DefaultAtom(t.Key.Type)}}
	if t.IsMap() {
		d.Values = []Atom{DefaultAtom(t.Value.Type)}
	}
	return d
}

// IsDefault reports whether d equals the default value for t.
func (d Datum) IsDefault(t *ColumnType) bool {
	return d.Equal(DefaultDatum(t))
}

// Equal reports whether two data of the same type are equal.
func (d Datum) Equal(o Datum) bool {
	if len(d.Keys) != len(o.Keys) || (d.Values == nil) != (o.Values == nil) && len(d.Keys) > 0 {
		return false
	}
	for i := range d.Keys {
		if CompareAtoms(d.Keys[i], o.Keys[i]) != 0 {
			return false
		}
		if d.Values != nil && CompareAtoms(d.Values[i], o.Values[i]) != 0 {
			return false
		}
	}
	return true
}

// Compare orders data of the same type: by elements, then by length.
func (d Datum) Compare(o Datum) int {
	for i := 0; i < len(d.Keys) && i < len(o.Keys); i++ {
		if c := CompareAtoms(d.Keys[i], o.Keys[i]); c != 0 {
			return c
		}
		if d.Values != nil && o.Values != nil {
			if c := CompareAtoms(d.Values[i], o.Values[i]); c != 0 {
				return c
			}
		}
	}
	return len(d.Keys) - len(o.Keys)
}

// find returns the index of key k, or -1.
func (d Datum) find(k Atom) int {
	i := sort.Search(len(d.Keys), func(i int) bool { return CompareAtoms(d.Keys[i], k) >= 0 })
	if i < len(d.Keys) && CompareAtoms(d.Keys[i], k) == 0 {
		return i
	}
	return -1
}

// Contains reports whether key k is present.
func (d Datum) Contains(k Atom) bool { return d.find(k) >= 0 }

// Lookup returns the value for key k of a map.
func (d Datum) Lookup(k Atom) (Atom, bool) {
	i := d.find(k)
	if i < 0 || d.Values == nil {
		return nil, false
	}
	return d.Values[i], true
}

// Clone copies d so that the copy may be changed.
func (d Datum) Clone() Datum {
	c := Datum{Keys: append([]Atom(nil), d.Keys...)}
	if d.Values != nil {
		c.Values = append([]Atom{}, d.Values...)
	}
	if c.Keys == nil {
		c.Keys = []Atom{}
	}
	return c
}

type byKey struct{ d *Datum }

func (s byKey) Len() int           { return len(s.d.Keys) }
func (s byKey) Less(i, j int) bool { return CompareAtoms(s.d.Keys[i], s.d.Keys[j]) < 0 }
func (s byKey) Swap(i, j int) {
	s.d.Keys[i], s.d.Keys[j] = s.d.Keys[j], s.d.Keys[i]
	if s.d.Values != nil {
		s.d.Values[i], s.d.Values[j] = s.d.Values[j], s.d.Values[i]
	}
}

// sortUnique sorts d and reports whether it had duplicate keys.
func (d *Datum) sortUnique() (dup bool) {
	sort.Stable(byKey{d})
	for i := 1; i < len(d.Keys); i++ {
		if CompareAtoms(d.Keys[i-1], d.Keys[i]) == 0 {
			return true
		}
	}
	return false
}

// dedupe sorts d and drops duplicate keys, keeping the first of each.
func (d *Datum) dedupe() {
	sort.Stable(byKey{d})
	n := 0
	for i := range d.Keys {
		if n > 0 && CompareAtoms(d.Keys[n-1], d.Keys[i]) == 0 {
			continue
		}
		d.Keys[n] = d.Keys[i]
		if d.Values != nil {
			d.Values[n] = d.Values[i]
		}
		n++
	}
	d.Keys = d.Keys[:n]
	if d.Values != nil {
		d.Values = d.Values[:n]
	}
}

// DatumFromJSON parses a decoded JSON value as a datum of type t, checking
// the element count but not the base-type constraints (see CheckConstraints).
func DatumFromJSON(t *ColumnType, v any, resolve Resolver) (Datum, *Error) {
	var d Datum
	if t.IsMap() {
		a, ok := v.([]any)
		if !ok || len(a) != 2 || a[0] != "map" {
			return d, SyntaxErrorf(v, "expected [\"map\", <array>]")
		}
		pairs, ok := a[1].([]any)
		if !ok {
			return d, SyntaxErrorf(v, "expected [\"map\", <array>]")
		}
		d.Keys = make([]Atom, 0, len(pairs))
		d.Values = make([]Atom, 0, len(pairs))
		for _, p := range pairs {
			pa, ok := p.([]any)
			if !ok || len(pa) != 2 {
				return d, SyntaxErrorf(p, "expected 2-element array")
			}
			k, err := AtomFromJSON(t.Key.Type, pa[0], resolve)
			if err != nil {
				return d, err
			}
			val, err := AtomFromJSON(t.Value.Type, pa[1], resolve)
			if err != nil {
				return d, err
			}
			d.Keys = append(d.Keys, k)
			d.Values = append(d.Values, val)
		}
	} else if a, ok := v.([]any); ok && len(a) == 2 && a[0] == "set" {
		elems, ok := a[1].([]any)
		if !ok {
			return d, SyntaxErrorf(v, "expected [\"set\", <array>]")
		}
		d.Keys = make([]Atom, 0, len(elems))
		for _, e := range elems {
			k, err := AtomFromJSON(t.Key.Type, e, resolve)
			if err != nil {
				return d, err
			}
			d.Keys = append(d.Keys, k)
		}
	} else {
		k, err := AtomFromJSON(t.Key.Type, v, resolve)
		if err != nil {
			return d, err
		}
		d.Keys = []Atom{k}
	}
	if n := len(d.Keys); n < t.Min || n > t.Max {
		kind := "set"
		if t.IsMap() {
			kind = "map"
		}
		switch {
		case t.Min == t.Max:
			return d, SyntaxErrorf(v, "%s must have exactly %s but %d are present", kind, members(t.Min), n)
		case t.Max == Unlimited:
			return d, SyntaxErrorf(v, "%s must have at least %s but %d are present", kind, members(t.Min), n)
		default:
			return d, SyntaxErrorf(v, "%s must have %d to %d members but %d are present", kind, t.Min, t.Max, n)
		}
	}
	if d.sortUnique() {
		if t.IsMap() {
			return d, Errorf(ErrGeneric, "map contains duplicate key")
		}
		return d, Errorf(ErrGeneric, "set contains duplicate value")
	}
	return d, nil
}

func members(n int) string {
	if n == 1 {
		return "one member"
	}
	return fmt.Sprintf("%d members", n)
}

// CheckConstraints checks every atom against t's base-type constraints.
// References are checked by the transaction engine, not here.
func (d Datum) CheckConstraints(t *ColumnType) *Error {
	for i, k := range d.Keys {
		if err := t.Key.CheckAtom(k); err != nil {
			return err
		}
		if t.Value != nil {
			if err := t.Value.CheckAtom(d.Values[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// AppendJSON appends d's JSON form as ovsdb-server writes it: maps as
// ["map", [...]], single-element sets as the bare atom, other sets as
// ["set", [...]].
func (d Datum) AppendJSON(dst []byte, t *ColumnType) []byte {
	if t.IsMap() {
		dst = append(dst, `["map",[`...)
		for i := range d.Keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, '[')
			dst = AppendAtomJSON(dst, d.Keys[i])
			dst = append(dst, ',')
			dst = AppendAtomJSON(dst, d.Values[i])
			dst = append(dst, ']')
		}
		return append(dst, "]]"...)
	}
	if len(d.Keys) == 1 {
		return AppendAtomJSON(dst, d.Keys[0])
	}
	dst = append(dst, `["set",[`...)
	for i, k := range d.Keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendAtomJSON(dst, k)
	}
	return append(dst, "]]"...)
}

// DiffIsValue reports whether update2 and log diffs of a column of type t
// carry the new value itself: true for columns holding at most one atom
// (scalars and optional values), as ovsdb-server writes them.
func (t *ColumnType) DiffIsValue() bool { return !t.IsMap() && t.Max == 1 }

// Diff returns the update2/log diff that turns old into new: the new value
// for columns of at most one atom, the symmetric difference for sets, and
// for maps the pairs removed (old value), added or changed (new value).
func Diff(t *ColumnType, old, new Datum) Datum {
	if t.DiffIsValue() {
		return new
	}
	var out Datum
	out.Keys = []Atom{}
	if t.IsMap() {
		out.Values = []Atom{}
	}
	i, j := 0, 0
	for i < len(old.Keys) || j < len(new.Keys) {
		var c int
		switch {
		case i == len(old.Keys):
			c = 1
		case j == len(new.Keys):
			c = -1
		default:
			c = CompareAtoms(old.Keys[i], new.Keys[j])
		}
		switch {
		case c < 0:
			out.Keys = append(out.Keys, old.Keys[i])
			if t.IsMap() {
				out.Values = append(out.Values, old.Values[i])
			}
			i++
		case c > 0:
			out.Keys = append(out.Keys, new.Keys[j])
			if t.IsMap() {
				out.Values = append(out.Values, new.Values[j])
			}
			j++
		default:
			if t.IsMap() && CompareAtoms(old.Values[i], new.Values[j]) != 0 {
				out.Keys = append(out.Keys, new.Keys[j])
				out.Values = append(out.Values, new.Values[j])
			}
			i++
			j++
		}
	}
	return out
}

// ApplyDiff is the inverse of Diff.
func ApplyDiff(t *ColumnType, old, diff Datum) Datum {
	if t.DiffIsValue() {
		return diff
	}
	out := old.Clone()
	for i, k := range diff.Keys {
		idx := out.find(k)
		switch {
		case idx < 0:
			out.Keys = append(out.Keys, k)
			if t.IsMap() {
				out.Values = append(out.Values, diff.Values[i])
			}
		case t.IsMap() && CompareAtoms(out.Values[idx], diff.Values[i]) != 0:
			out.Values[idx] = diff.Values[i]
		default:
			out.Keys = append(out.Keys[:idx], out.Keys[idx+1:]...)
			if t.IsMap() {
				out.Values = append(out.Values[:idx], out.Values[idx+1:]...)
			}
			continue
		}
		out.sortUnique()
	}
	return out
}
