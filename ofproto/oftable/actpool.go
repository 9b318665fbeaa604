package oftable

import (
	"hash/maphash"
	"reflect"
	"runtime"
	"sync"
	"unsafe"
	"weak"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// actionPool lets the rules that carry the same action list share one
// copy of it. OVN installs several rules per logical flow (one per port,
// address or conjunction clause) with identical actions, and a decoded
// action is large (ofp.Action, most of it fields only rare kinds use):
// with the pool each further rule costs a slice header and a pointer.
//
// The pool holds each list weakly (its first element, with its length):
// a list lives while a rule's Actions refers to it, and a cleanup drops
// the entry once the collector has freed it, so no release call has to
// follow every way a rule can leave a table, and a rule costs nothing
// more than its slice header.
type actionPool struct {
	mu   sync.Mutex               // decoders of several connections and cleanups use it
	m    map[uint64]sharedActions // by the hash of the list's key
	seed maphash.Seed
	buf  []byte // the key being hashed (guarded by mu)
}

type sharedActions struct {
	first weak.Pointer[ofp.Action]
	n     int
}

// intern returns the shared copy of acts, or acts itself when it is the
// first of its kind (from then on shared) or cannot be shared. Rules
// never change their action lists in place, so sharing is safe. wire,
// when not nil, is the encoding acts were decoded from (with its
// OpenFlow version): lists are found by its hash, which costs no
// encoding; nil hashes acts' OpenFlow 1.5 encoding. Either way the decoded lists are
// compared whole before one is shared, so a key only finds candidates.
func (p *actionPool) intern(acts []ofp.Action, version uint8, wire []byte) []ofp.Action {
	if len(acts) == 0 {
		return acts
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m, p.seed = map[uint64]sharedActions{}, maphash.MakeSeed()
	}
	// Only the key's hash is kept: a list whose hash a different live
	// list holds is simply not shared.
	var h uint64
	if wire != nil {
		var mh maphash.Hash
		mh.SetSeed(p.seed)
		mh.WriteByte(version)
		mh.Write(wire)
		h = mh.Sum64()
	} else {
		k, ok := appendActionKey(p.buf[:0], acts)
		if !ok {
			return acts
		}
		p.buf = k
		h = maphash.Bytes(p.seed, k)
	}
	if e, ok := p.m[h]; ok {
		if first := e.first.Value(); first != nil {
			// The capacity is the length: an append to one rule's
			// list cannot write into another's.
			if shared := unsafe.Slice(first, e.n); reflect.DeepEqual(shared, acts) {
				return shared
			}
			return acts
		}
	}
	p.m[h] = sharedActions{first: weak.Make(&acts[0]), n: len(acts)}
	runtime.AddCleanup(&acts[0], p.forget, h)
	return acts
}

// ShareActions returns the tables' shared copy of acts, a freshly decoded
// action list on its way into a rule (the switch's flow_mod decoder calls
// it, so that a bundle holds shared lists too). wire is what acts were
// decoded from in OpenFlow version (nil: the pool encodes acts to find
// equal lists). A rule's list is never changed in place.
func (t *Tables) ShareActions(acts []ofp.Action, version uint8, wire []byte) []ofp.Action {
	return t.actions.intern(acts, version, wire)
}

// forget drops hash h's entry once its list is gone (a newer list with
// the same hash keeps it).
func (p *actionPool) forget(h uint64) {
	p.mu.Lock()
	if e, ok := p.m[h]; ok && e.first.Value() == nil {
		delete(p.m, h)
	}
	p.mu.Unlock()
}

// size is the number of distinct lists the pool knows (for tests).
func (p *actionPool) size() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.m)
}

// appendActionKey appends acts' OpenFlow 1.5 encoding followed by the
// decoded state the encoding does not carry: each action's raw kind (load
// and set_field print differently) and the flow context of the
// version-dependent ones.
func appendActionKey(b []byte, acts []ofp.Action) ([]byte, bool) {
	b, err := ofp.AppendOfpacts(b, acts, mf.OF15, true)
	if err != nil {
		return nil, false
	}
	return appendActionContext(b, acts), true
}

func appendActionContext(b []byte, acts []ofp.Action) []byte {
	for i := range acts {
		a := &acts[i]
		var flags byte
		if a.PushVLANIfNeeded {
			flags |= 1
		}
		if a.FlowHasVLAN {
			flags |= 2
		}
		b = append(b, byte(a.Raw>>8), byte(a.Raw), flags, a.FlowIPProto)
		b = appendActionContext(b, a.Nested)
	}
	return b
}
