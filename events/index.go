package events

import "slices"

// maxIndexedTypes bounds the type index. Event types are names the code
// publishes (a few dozen), never caller input; past the bound a type is
// matched at each publication rather than remembered, so a bug that
// invents types costs time, not memory.
const maxIndexedTypes = 1024

// index is the bus's subscribers, and for each event type published so far
// the subscribers whose prefixes match it. It makes a publication cost one
// lookup plus the matching subscribers, however many prefixes they have:
// prefix matching happens when a subscriber comes (against the known
// types) and when a type is first published (against the subscribers).
// It is not safe for concurrent use: the bus's lock guards it.
type index struct {
	subs   []*Subscription
	byType map[string][]*Subscription
}

func newIndex() index { return index{byType: make(map[string][]*Subscription)} }

// subscribers returns the subscribers that want typ. The slice is the
// index's: read it under the lock, do not keep it.
func (x *index) subscribers(typ string) []*Subscription {
	if list, ok := x.byType[typ]; ok {
		return list
	}
	var list []*Subscription
	for _, s := range x.subs {
		if s.match(typ) {
			list = append(list, s)
		}
	}
	if len(x.byType) < maxIndexedTypes {
		x.byType[typ] = list
	}
	return list
}

func (x *index) add(s *Subscription) {
	x.subs = append(x.subs, s)
	for typ, list := range x.byType {
		if s.match(typ) {
			x.byType[typ] = append(list, s)
		}
	}
}

// remove takes s out of every list. Lists are rebuilt rather than edited in
// place so that a slice handed out by subscribers is never changed.
func (x *index) remove(s *Subscription) {
	x.subs = without(x.subs, s)
	for typ, list := range x.byType {
		if slices.Contains(list, s) {
			x.byType[typ] = without(list, s)
		}
	}
}

func without(list []*Subscription, s *Subscription) []*Subscription {
	out := make([]*Subscription, 0, len(list))
	for _, o := range list {
		if o != s {
			out = append(out, o)
		}
	}
	return out
}

// all returns a copy of the subscribers.
func (x *index) all() []*Subscription { return slices.Clone(x.subs) }
