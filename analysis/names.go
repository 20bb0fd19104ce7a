package analysis

import (
	"slices"

	"github.com/kwire/kwire/facts"
)

// A capture often begins after its clients learnt the topics' IDs: the
// exchanges that name a topic by ID alone (Fetch v13+, OffsetCommit v10,
// KIP-848 assignments, KIP-516) come before the Metadata that names it,
// and the groups and transactions kept what they saw by ID. A report,
// made at the end, names them with everything the capture stated
// (facts.Names), so that one partition is one row and one assignment, not
// an ID under one generation and a name under the next.

// resolveNames names, in every group kept, the topics known by ID alone
// whose names n learnt since: members' and generations' assignments and
// plans, commits, fetch offsets and high watermarks. Entries that become
// the same partition are merged. It changes the kept state, so that
// reports made later (live's, several) agree.
func (t *groupTracker) resolveNames(n *facts.Names) {
	if n.Len() == 0 {
		return
	}
	scopes := map[*groupScope]bool{}
	for _, g := range t.all() {
		for _, m := range g.order {
			m.assignment = resolveTPs(n, m.assignment)
			m.fetch = relabel(n, m.fetch, func(a, b int64) int64 { return b })
		}
		for _, gn := range g.gens {
			for _, gm := range gn.members {
				gm.assigned = resolveTPs(n, gm.assigned)
				gm.plan = resolveTPs(n, gm.plan)
			}
		}
		g.resolveCommits(n)
		scopes[g.sc] = true
	}
	for sc := range scopes {
		sc.hw = relabel(n, sc.hw, func(a, b hwMark) hwMark {
			if b.at.Before(a.at) {
				return a
			}
			return b
		})
	}
}

// resolveTPs names tps's topics known by ID alone, merging entries that
// then name the same topic.
func resolveTPs(n *facts.Names, tps []facts.TopicPartitions) []facts.TopicPartitions {
	if !n.ResolvePartitions(tps) {
		return tps
	}
	return unionTPs(tps, nil)
}

// relabel renames the keys of m that are topic ID labels n now names;
// two entries of one partition are merged by merge(older, newer), the
// one kept under the name taken as the newer.
func relabel[V any](n *facts.Names, m map[tpKey]V, merge func(a, b V) V) map[tpKey]V {
	var moved []tpKey
	for k := range m {
		if n.NameOfLabel(k.topic) != k.topic {
			moved = append(moved, k)
		}
	}
	for _, k := range moved {
		v := m[k]
		delete(m, k)
		nk := tpKey{n.NameOfLabel(k.topic), k.part}
		if w, ok := m[nk]; ok {
			v = merge(v, w)
		}
		m[nk] = v
	}
	return m
}

// resolveCommits renames the group's commits kept under topic ID labels,
// merging a partition committed by ID (OffsetCommit v10) and fetched or
// committed by name.
func (g *group) resolveCommits(n *facts.Names) {
	changed := false
	for _, k := range g.corder {
		if n.NameOfLabel(k.topic) != k.topic {
			changed = true
			break
		}
	}
	if !changed {
		return
	}
	order := make([]tpKey, 0, len(g.corder))
	for _, k := range g.corder {
		c := g.commits[k]
		nk := tpKey{n.NameOfLabel(k.topic), k.part}
		if nk == k {
			order = append(order, k)
			continue
		}
		delete(g.commits, k)
		if o, ok := g.commits[nk]; ok && c != nil {
			o.merge(c)
			continue
		}
		if c != nil {
			c.tp = nk
			g.commits[nk] = c
		}
		order = append(order, nk)
	}
	g.corder = order
}

// merge folds c, another record of the same partition, into o: the
// counts add up, and the later commit's offset and error stand.
func (o *commit) merge(c *commit) {
	switch {
	case o.fetched && !c.fetched:
		o.committed = c.committed // a commit says more than a fetch of it
	case c.fetched && !o.fetched:
	case c.at.After(o.at):
		o.committed = c.committed
	}
	if c.lastErrorAt.After(o.lastErrorAt) {
		o.lastError, o.lastErrorAt = c.lastError, c.lastErrorAt
	}
	o.commits += c.commits
	o.stale += c.stale
	o.errors += c.errors
	o.fetched = o.fetched && c.fetched
	o.txn = o.txn || c.txn
	if o.held == nil {
		o.held = c.held
	}
}

// resolveNames names, in a transactions report, the topics its records,
// sequence issues, added partitions and consumers' fetches kept by ID
// alone whose names n learnt since.
func (r *TxnsReport) resolveNames(n *facts.Names) {
	if n.Len() == 0 {
		return
	}
	name := n.NameOfLabel
	records := func(rs []TxnRecordsReport) {
		for i := range rs {
			rs[i].Topic = name(rs[i].Topic)
		}
	}
	for i := range r.Producers {
		p := &r.Producers[i]
		records(p.Records)
		for j := range p.Sequences {
			p.Sequences[j].Topic = name(p.Sequences[j].Topic)
		}
		for j := range p.Described {
			p.Described[j].Topic = name(p.Described[j].Topic)
		}
		for j := range p.Transactions {
			x := &p.Transactions[j]
			records(x.Records)
			for k := range x.Added {
				x.Added[k].Topic = name(x.Added[k].Topic)
			}
		}
	}
	for i := range r.Consumers {
		c := &r.Consumers[i]
		for j := range c.Topics {
			c.Topics[j] = name(c.Topics[j])
		}
		slices.Sort(c.Topics)
		c.Topics = slices.Compact(c.Topics)
		for j := range c.AbortedTransactions {
			c.AbortedTransactions[j].Topic = name(c.AbortedTransactions[j].Topic)
		}
		for j := range c.Markers {
			c.Markers[j].Topic = name(c.Markers[j].Topic)
		}
	}
}
