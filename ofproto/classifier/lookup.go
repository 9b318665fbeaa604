package classifier

import "github.com/gvs-project/gvs/ofproto/mf"

// trieCtx caches one trie's lookup for the flow during one classifier
// lookup: tries are consulted lazily and at most once.
type trieCtx struct {
	done     bool
	maskbits int
	plens    u128
}

// softMatch is a conjunctive-clause rule found by the main loop, with the
// subtable it came from (to find lower-priority rules with the same match).
type softMatch[T any] struct {
	r  *Rule[T]
	st *subtable[T]
}

// Lookup returns the highest-priority rule visible in version v that
// matches fl, resolving conjunctive matches, or nil. If wc is not nil,
// Lookup ORs into it every bit it examined, so that every flow equal to fl
// in the bits of wc gets the same result (the megaflow property). Lookup
// never blocks and never allocates unless more than 16 conjunctive
// clauses match.
func (c *Classifier[T]) Lookup(v Version, fl *mf.Flow, wc *mf.Flow) *Rule[T] {
	return c.view.Load().lookup(v, fl, wc, true)
}

func (vw *view[T]) lookup(v Version, fl *mf.Flow, wc *mf.Flow, allowConj bool) *Rule[T] {
	var tctx [MaxPrefixFields]trieCtx
	var softBuf [16]softMatch[T]
	soft := softBuf[:0]
	hardPri, softPri := -1, -1
	var hard *Rule[T]
	kw := fw(fl)
	var ww *words
	if wc != nil {
		ww = fw(wc)
	}
	for _, e := range vw.subs {
		if e.pri <= hardPri {
			break // subtables are in decreasing maximum priority
		}
		r := vw.findMatch(e.st, v, fl, kw, ww, &tctx)
		if r == nil || int(r.priority) <= hardPri {
			continue
		}
		switch {
		case r.conj == nil:
			hard, hardPri = r, int(r.priority)
		case allowConj:
			soft = append(soft, softMatch[T]{r, e.st})
			softPri = max(softPri, int(r.priority))
		}
	}
	if hardPri >= softPri {
		return hard
	}
	return vw.resolveSoft(v, fl, wc, soft, hard, hardPri)
}

// resolveSoft finds the highest-priority conjunctive match among the soft
// matches that beats the hard match, as Open vSwitch's
// classifier_lookup__: at the highest soft priority, a conjunction whose
// every clause has a matching rule there yields a conj_id, and the flow
// is looked up again with that conj_id; when none succeeds, rules with the
// same match and lower priority take the soft matches' places.
func (vw *view[T]) resolveSoft(v Version, fl *mf.Flow, wc *mf.Flow, soft []softMatch[T], hard *Rule[T], hardPri int) *Rule[T] {
	for {
		n := 0
		for _, s := range soft {
			if s.r != nil && int(s.r.priority) > hardPri {
				soft[n] = s
				n++
			}
		}
		soft = soft[:n]
		if n == 0 {
			return hard
		}
		softPri, nAtPri := -1, 0
		for _, s := range soft {
			switch p := int(s.r.priority); {
			case p > softPri:
				softPri, nAtPri = p, 1
			case p == softPri:
				nAtPri++
			}
		}
		var cmBuf [16]conjMatch
		cms := cmBuf[:0]
		for _, s := range soft {
			if int(s.r.priority) != softPri {
				continue
			}
			id, ok := findConjunctiveMatch(s.r, nAtPri, &cms)
			if !ok {
				continue
			}
			f2 := *fl
			f2.ConjID = id
			if r := vw.lookup(v, &f2, wc, false); r != nil {
				return r
			}
		}
		// No conjunction at softPri led anywhere: fall back to the next
		// lower-priority rule with the same match as each soft match.
		for i := range soft {
			s := &soft[i]
			if int(s.r.priority) != softPri {
				continue
			}
			next := s.st.nextLower(s.r, v)
			switch {
			case next == nil:
				s.r = nil
			case next.conj == nil:
				if int(next.priority) > hardPri {
					hard, hardPri = next, int(next.priority)
				}
				s.r = nil
			default:
				s.r = next
			}
		}
	}
}

type conjMatch struct {
	id      uint32
	clauses uint64 // 1-bits: clauses matched, or beyond the clause count
}

// findConjunctiveMatch adds r's clauses to cms and reports the first
// conjunction whose clauses are then all present. Conjunctions with more
// clauses than maxClauses (the number of soft matches at this priority)
// cannot complete and are skipped.
func findConjunctiveMatch[T any](r *Rule[T], maxClauses int, cms *[]conjMatch) (uint32, bool) {
	if maxClauses < r.conj.minClauses {
		return 0, false
	}
	for _, cj := range r.conj.list {
		if int(cj.NClauses) > maxClauses {
			continue
		}
		var cm *conjMatch
		for i := range *cms {
			if (*cms)[i].id == cj.ID {
				cm = &(*cms)[i]
				break
			}
		}
		if cm == nil {
			*cms = append(*cms, conjMatch{id: cj.ID, clauses: ^uint64(0) << (cj.NClauses & 63)})
			cm = &(*cms)[len(*cms)-1]
		}
		cm.clauses |= 1 << cj.Clause
		if cm.clauses == ^uint64(0) {
			return cm.id, true
		}
	}
	return 0, false
}

// nextLower returns the highest-priority rule visible in v with r's match
// and a lower priority than r.
func (st *subtable[T]) nextLower(r *Rule[T], v Version) *Rule[T] {
	kw := r.words()
	var best *Rule[T]
	for e := st.rules.head(r.hash); e != nil; e = e.next {
		o := e.val
		if e.hash == r.hash && o.priority < r.priority && (best == nil || o.priority > best.priority) &&
			o.VisibleIn(v) && o.matchesWords(&kw) {
			best = o
		}
	}
	return best
}

// find returns the highest-priority rule visible in v in the chain of hash
// h whose match equals the flow's words through the subtable mask.
func (st *subtable[T]) find(v Version, kw *words, h uint64) *Rule[T] {
	var best *Rule[T]
	for e := st.rules.head(h); e != nil; e = e.next {
		if e.hash != h {
			continue
		}
		r := e.val
		if (best == nil || r.priority > best.priority) && r.VisibleIn(v) && r.matchesWords(kw) {
			best = r
		}
	}
	return best
}

// findMatch looks fl up in one subtable. Without wc it is a single hash
// lookup. With wc it is staged: before each stage the prefix tries may
// show that no rule can match, and each stage but the last checks that
// some rule agrees with the flow in the stages so far; a miss un-wildcards
// only what was examined.
func (vw *view[T]) findMatch(st *subtable[T], v Version, fl *mf.Flow, kw *words, ww *words, tctx *[MaxPrefixFields]trieCtx) *Rule[T] {
	last := len(st.stages) - 1
	var h uint64
	if ww == nil {
		for i := range st.stages {
			h = st.stages[i].hash(h, i, kw)
		}
		return st.find(v, kw, finish(h, last))
	}
	for i := range last {
		if vw.checkTries(st, st.stages[i].layer, fl, ww, tctx) {
			st.fold(ww, i)
			return nil
		}
		h = st.stages[i].hash(h, i, kw)
		if !st.indices[i].contains(finish(h, i)) {
			st.fold(ww, i+1)
			return nil
		}
	}
	if vw.checkTries(st, st.stages[last].layer, fl, ww, tctx) {
		st.fold(ww, last)
		return nil
	}
	h = st.stages[last].hash(h, last, kw)
	r := st.find(v, kw, finish(h, last))
	if r == nil && st.portsLen > 0 {
		// Un-wildcard only the port bits the ports trie needed to show
		// that no rule's ports match.
		var plens u128
		val := portsValue(fl, st.portsMask)
		n := trieLookup(st.ports.Load(), val, 32, &plens)
		m := st.portsMask
		if n < 32 {
			m &= ^uint32(0) << (32 - n)
		}
		wf := flowOf(ww)
		wf.TpSrc |= uint16(m >> 16)
		wf.TpDst |= uint16(m)
		st.fold(ww, last)
		return nil
	}
	for _, i := range st.idx {
		ww[i] |= st.mask[i]
	}
	return r
}

// fold un-wildcards the subtable's bits of stages [0,n).
func (st *subtable[T]) fold(ww *words, n int) {
	for i := range n {
		sg := &st.stages[i]
		for k, w := range sg.idx {
			ww[w] |= sg.mask[k]
		}
	}
}

// checkTries reports whether a prefix trie on a field of this stage shows
// that no rule of the subtable can match fl; it then un-wildcards the
// prefix bits that decided it (when that is no more than the subtable
// would un-wildcard itself).
func (vw *view[T]) checkTries(st *subtable[T], layer int, fl *mf.Flow, ww *words, tctx *[MaxPrefixFields]trieCtx) bool {
	for j, f := range vw.tries.fields {
		plen := int(st.trieLen[j])
		if plen == 0 || f.stage != layer {
			continue
		}
		ctx := &tctx[j]
		if !ctx.done {
			ctx.done = true
			if f.dlType == 0 || fl.EthType == f.dlType {
				ctx.maskbits = trieLookup(vw.tries.roots[j].Load(), f.get(fl), f.nbits, &ctx.plens)
			} else {
				// The field does not apply to this flow: skip nothing.
				ctx.plens = u128{^uint64(0), ^uint64(0)}
			}
		}
		if ctx.plens.has(plen - 1) {
			continue
		}
		wf := flowOf(ww)
		if ctx.maskbits <= plen {
			f.orPrefix(wf, ctx.maskbits)
			return true
		}
		if f.hasPrefix(wf, ctx.maskbits) {
			return true
		}
	}
	return false
}
