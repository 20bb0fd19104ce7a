package analysis

// link is an item's place on a list: lists are intrusive and doubly
// linked, so that an item costs no allocation on one and leaves it in
// constant time (groups' ended members, txns' producers: their eviction
// orders).
type link[T any] struct {
	prev, next *T
	on         bool // on a list
}

// linked is a *T that holds its link.
type linked[T any] interface {
	*T
	link() *link[T]
}

// list is a list of items linked through their link, oldest first.
type list[T any, P linked[T]] struct {
	first, last *T
	n           int
}

// push appends x.
func (l *list[T, P]) push(x P) {
	k := x.link()
	k.prev, k.next, k.on = l.last, nil, true
	if l.last != nil {
		P(l.last).link().next = x
	} else {
		l.first = x
	}
	l.last = x
	l.n++
}

// remove takes x off the list; nothing when it is on none.
func (l *list[T, P]) remove(x P) {
	k := x.link()
	if !k.on {
		return
	}
	if k.prev != nil {
		P(k.prev).link().next = k.next
	} else {
		l.first = k.next
	}
	if k.next != nil {
		P(k.next).link().prev = k.prev
	} else {
		l.last = k.prev
	}
	*k = link[T]{}
	l.n--
}

// next returns the item after x.
func next[T any, P linked[T]](x P) P { return x.link().next }

// all returns the items in order.
func (l *list[T, P]) all() []P {
	xs := make([]P, 0, l.n)
	for x := P(l.first); x != nil; x = next[T, P](x) {
		xs = append(xs, x)
	}
	return xs
}
