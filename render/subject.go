package render

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/facts"
	"github.com/kwire/kwire/protocol"
	"github.com/kwire/kwire/render/termsafe"
	"github.com/kwire/kwire/render/units"
)

// The one-line subject: what an exchange is about, written from its facts
// (dissect.Exchange.Facts; package facts). Its parts, in order:
//
//	topics            orders[0@100+3 gzip 512B,3+2 145B] other-topic
//	                  per partition: @ the base offset (Produce: the
//	                  response's; Fetch: the first record's) or the
//	                  committed offset (OffsetCommit, TxnOffsetCommit,
//	                  OffsetFetch; "none" for -1), + the record count, the
//	                  codecs ("gzip/lz4" when several), the batches' bytes,
//	                  "partial" for a batch cut at a fetch's end,
//	                  "aborted=N" for the aborted transactions a fetch
//	                  lists, "producers=N" for the active producers a
//	                  DescribeProducers lists (KIP-664); ListOffsets "0 latest→42" (the time asked, the
//	                  offset answered); OffsetForLeaderEpoch "0→40" (where
//	                  the epoch asked ends); DeleteRecords "0 before
//	                  100→100" (the records before 100 deleted, the log
//	                  start after; "before high-watermark" for -1); an
//	                  incremental Fetch's
//	                  forgot=t[1,2] (ForgottenTopicsData, KIP-227: not
//	                  fetched). An offset that comes with the
//	                  partition's error is no result and is left out
//	                  (facts.Partition.Result: a refused Produce shows
//	                  orders[0+3 512B]). Topics known only by ID show the ID
//	                  (base64url) until a response of the capture names it.
//	group             JoinGroup leads with the topics subscribed and adds
//	                  owned=t[0,1] (cooperative rebalancing, KIP-429);
//	                  SyncGroup leads with the member's own assignment (the
//	                  response's) and the leader's request adds "assigns N
//	                  members"; KIP-848 heartbeats add owned= and assigned=.
//	                  Then group=G member=03353442… (short) instance=I
//	                  gen=N (classic) or epoch=E (KIP-848; epoch=0→1 when
//	                  the response moves it; -1 "leave", -2 "static leave"),
//	                  gen/epoch=N for an OffsetCommit v9+ or
//	                  TxnOffsetCommit of a group no exchange before showed
//	                  the protocol of (facts.Group.GenerationOrEpoch),
//	                  "leader" on the leader's JoinGroup, reason="...";
//	                  group lists (DescribeGroups, DeleteGroups, ...)
//	                  groups=a,b,+3, ListGroups groups: 12; describe
//	                  responses the members of each group described
//	                  (members: 3,2; "-" for a group refused) and, for
//	                  one KIP-848 group, its epoch (group-epoch=5).
//	producer          txn=T pid=P epoch=E (the request's; →new when the
//	                  response gives new ones: InitProducerId, EndTxn v5+),
//	                  for Produce from its batches; InitProducerId v6
//	                  (KIP-939) adds 2pc, keep-prepared and the prepared
//	                  transaction kept, ongoing-pid=P ongoing-epoch=E;
//	                  batched
//	                  AddPartitionsToTxn txn=T1 t[0] txn=T2 u[1] (each
//	                  entry before its topics, as OffsetFetch v8+'s
//	                  group=G1 t[0@5] group=G2 t[0@7]; facts.Topic.Owner);
//	                  ListTransactions txns: N.
//	API-specific      FindCoordinator group=G → node 0 host:port (txn= /
//	                  share= by key type); EndTxn COMMIT | ABORT; Fetch
//	                  read_committed | read_uncommitted; config and ACL
//	                  resources other than topics as type:name
//	                  (broker:1, group:g); throttled=120ms when the broker
//	                  throttled the client (KIP-219); SaslAuthenticate
//	                  mechanism=PLAIN user=alice.
//
// Subject returns "" when nothing applies.
func Subject(e *dissect.Exchange) string {
	return string(appendSubject(nil, e))
}

// maxSubjectList is how many IDs a subject lists before "+N".
const maxSubjectList = 3

// subjectBuf is the subject being written.
type subjectBuf struct {
	b     []byte
	start int
	// owners are the batch entries named before their topics
	// (facts.Exchange.Owners); the group and transaction lists leave them
	// out.
	owners []facts.Scope
}

// word appends " k=v" (or "k=v" at the start of the subject), quoting v
// when it has spaces, quotes or unprintable bytes.
func (s *subjectBuf) word(k, v string) {
	s.sep()
	s.b = appendWordValue(append(s.b, k...), v)
}

func (s *subjectBuf) sep() {
	if len(s.b) > s.start {
		s.b = append(s.b, ' ')
	}
}

// list appends " k=a,b,c,+N".
func (s *subjectBuf) list(k string, items []string) {
	if len(items) == 0 {
		return
	}
	s.sep()
	s.b = append(s.b, k...)
	s.b = appendList(s.b, items)
}

// unnamed returns the IDs of ids no batch entry of role r named before
// its topics (s.owners).
func (s *subjectBuf) unnamed(r protocol.Role, ids []string) []string {
	if len(s.owners) == 0 {
		return ids
	}
	var out []string
	for _, id := range ids {
		if !slices.Contains(s.owners, facts.Scope{Role: r, ID: id}) {
			out = append(out, id)
		}
	}
	return out
}

// appendList appends up to maxSubjectList items joined by ",", then
// ",+N" for the rest.
func appendList(b []byte, items []string) []byte {
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		if i == maxSubjectList {
			b = append(b, '+')
			return strconv.AppendInt(b, int64(len(items)-i), 10)
		}
		b = termsafe.AppendQuote(b, it)
	}
	return b
}

// appendSubject appends Subject(e) to b.
func appendSubject(b []byte, e *dissect.Exchange) []byte {
	if e == nil {
		return b
	}
	fx := e.Facts()
	s := &subjectBuf{b: b, start: len(b)}
	g := &fx.Group
	switch fx.Key {
	case protocol.KeyJoinGroup:
		if sub := g.Subscription; sub != nil && len(sub.Topics) > 0 {
			s.sep()
			s.b = appendList(s.b, sub.Topics)
		}
	case protocol.KeySyncGroup:
		if a := g.Assignment; a != nil {
			s.topicPartitions("", a.Partitions)
			if c := a.Connect; c != nil {
				// A Kafka Connect worker's: its connectors and tasks.
				s.connectors("", c.Connectors)
				s.connectors("revoked=", c.Revoked)
			}
		}
	}
	s.topics(fx)
	switch fx.Key {
	case protocol.KeyJoinGroup:
		if sub := g.Subscription; sub != nil {
			s.topicPartitions("owned=", sub.Owned)
		}
	case protocol.KeySyncGroup:
		if n := len(g.Members); n > 0 {
			s.sep()
			s.b = append(s.b, "assigns "...)
			s.b = strconv.AppendInt(s.b, int64(n), 10)
			if connectPlan(g.Members) {
				s.b = append(s.b, " worker"...) // a Kafka Connect leader's plan
			} else {
				s.b = append(s.b, " member"...)
			}
			if n != 1 {
				s.b = append(s.b, 's')
			}
		}
	case protocol.KeyFetch:
		s.topicPartitions("forgot=", fx.Forgotten) // KIP-227: dropped from the session, not fetched
	case protocol.KeyConsumerGroupHeartbeat, protocol.KeyShareGroupHeartbeat, protocol.KeyStreamsGroupHeartbeat:
		s.topicPartitions("owned=", g.Owned)
		if a := g.Assignment; a != nil {
			s.topicPartitions("assigned=", a.Partitions)
		}
	}
	s.group(fx)
	s.producer(fx)
	s.api(e, fx)
	if fx.ThrottleMs > 0 {
		s.word("throttled=", units.Duration(time.Duration(fx.ThrottleMs)*time.Millisecond))
	}
	return s.b
}

// topics appends the exchange's topics with their partitions.
func (s *subjectBuf) topics(fx *facts.Exchange) {
	committed := fx.Key == protocol.KeyOffsetCommit || fx.Key == protocol.KeyTxnOffsetCommit || fx.Key == protocol.KeyOffsetFetch
	owners := fx.Owners()
	for i := range fx.Topics {
		t := &fx.Topics[i]
		if owners && t.Owner.Role != protocol.RoleNone && (i == 0 || t.Owner != fx.Topics[i-1].Owner) {
			// Entries of a batch: each before its topics (group=g1 t[0] group=g2 t[0]).
			s.sep()
			s.b = appendScope(s.b, t.Owner)
			if !slices.Contains(s.owners, t.Owner) {
				s.owners = append(s.owners, t.Owner)
			}
		}
		s.sep()
		s.b = termsafe.AppendQuote(s.b, t.Label())
		if len(t.Partitions) == 0 {
			continue
		}
		s.b = append(s.b, '[')
		for j := range t.Partitions {
			if j > 0 {
				s.b = append(s.b, ',')
			}
			s.b = appendPartition(s.b, &t.Partitions[j], committed)
		}
		s.b = append(s.b, ']')
	}
}

// appendPartition appends one partition of the topic list.
func appendPartition(b []byte, p *facts.Partition, committed bool) []byte {
	b = strconv.AppendInt(b, int64(p.Index), 10)
	o := &p.Offsets
	if ts, ok := o.Get(facts.OffsetListTimestamp); ok {
		b = append(b, ' ')
		b = append(b, ListOffsetsTimestamp(ts)...)
	}
	if d, ok := o.Get(facts.OffsetDeletion); ok {
		// DeleteRecords: the records before this offset go.
		b = append(b, " before "...)
		if d == -1 {
			b = append(b, "high-watermark"...)
		} else {
			b = strconv.AppendInt(b, d, 10)
		}
	}
	// Offsets that come with the partition's error are no result
	// (facts.Partition.Result): a refused Produce wrote nothing.
	// The offset the broker answered: ListOffsets', where the epoch asked
	// ends (OffsetForLeaderEpoch), the log start after a DeleteRecords.
	for _, k := range [...]facts.OffsetKind{facts.OffsetListed, facts.OffsetEnd, facts.OffsetLowWatermark} {
		if off, ok := p.Result(k); ok {
			b = append(b, "→"...)
			b = strconv.AppendInt(b, off, 10)
		}
	}
	r := p.Records
	_, based := o.Get(facts.OffsetBase)
	switch base, ok := p.Result(facts.OffsetBase); {
	case ok && base >= 0:
		b = append(b, '@')
		b = strconv.AppendInt(b, base, 10)
	case committed:
		if c, ok := p.Result(facts.OffsetCommitted); ok {
			b = append(b, '@')
			if c < 0 {
				b = append(b, "none"...)
			} else {
				b = strconv.AppendInt(b, c, 10)
			}
		}
	case r != nil && r.HasOffsets && !based:
		if _, fetched := p.Result(facts.OffsetHighWatermark); fetched {
			b = append(b, '@') // a fetch: where its records start
			b = strconv.AppendInt(b, r.FirstOffset, 10)
		}
	}
	if r != nil {
		if r.Count >= 0 && r.Batches > 0 {
			b = append(b, '+')
			b = strconv.AppendInt(b, r.Count, 10)
		}
		if r.Bytes > 0 {
			b = append(b, ' ')
			if r.Batches > 0 && r.Codecs != 0 && r.Codecs != 1 {
				for k, c := range r.Codecs.List() {
					if k > 0 {
						b = append(b, '/')
					}
					b = append(b, c.String()...)
				}
				b = append(b, ' ')
			}
			b = units.AppendSize(b, r.Bytes)
		}
		if r.Partial {
			b = append(b, " partial"...)
		}
	}
	if p.AbortedTxns > 0 {
		b = append(b, " aborted="...)
		b = strconv.AppendInt(b, int64(p.AbortedTxns), 10)
	}
	if p.ActiveProducers >= 0 && p.Error == 0 {
		b = append(b, " producers="...)
		b = strconv.AppendInt(b, int64(p.ActiveProducers), 10)
	}
	return b
}

// topicPartitions appends "k" and a list of topics with partitions
// (t[0,1] u[2]).
func (s *subjectBuf) topicPartitions(k string, tps []facts.TopicPartitions) {
	if len(tps) == 0 {
		return
	}
	s.sep()
	s.b = append(s.b, k...)
	for i := range tps {
		if i > 0 {
			s.b = append(s.b, ' ')
		}
		tp := &tps[i]
		s.b = termsafe.AppendQuote(s.b, tp.Label())
		s.b = append(s.b, '[')
		for j, p := range tp.Partitions {
			if j > 0 {
				s.b = append(s.b, ',')
			}
			s.b = strconv.AppendInt(s.b, int64(p), 10)
		}
		s.b = append(s.b, ']')
	}
}

// connectors appends k and Kafka Connect connectors with their tasks,
// "pg-sink[connector,0,1]" (task -1 is the connector instance), up to
// maxSubjectList of them, then "+N".
func (s *subjectBuf) connectors(k string, cs []facts.ConnectorTasks) {
	if len(cs) == 0 {
		return
	}
	s.sep()
	s.b = append(s.b, k...)
	for i := range cs {
		if i > 0 {
			s.b = append(s.b, ' ')
		}
		if i == maxSubjectList {
			s.b = append(s.b, '+')
			s.b = strconv.AppendInt(s.b, int64(len(cs)-i), 10)
			return
		}
		s.b = termsafe.AppendQuote(s.b, cs[i].Connector)
		s.b = append(s.b, '[')
		for j, t := range cs[i].Tasks {
			if j > 0 {
				s.b = append(s.b, ',')
			}
			if t == -1 {
				s.b = append(s.b, "connector"...)
			} else {
				s.b = strconv.AppendInt(s.b, int64(t), 10)
			}
		}
		s.b = append(s.b, ']')
	}
}

// connectPlan reports whether a SyncGroup plan's assignments are Kafka
// Connect workers'.
func connectPlan(ms []facts.Member) bool {
	for i := range ms {
		if a := ms[i].Assignment; a != nil && a.Connect != nil {
			return true
		}
	}
	return false
}

// groupAPI reports whether key is one of the APIs of a group member.
func groupAPI(key int16) bool {
	switch key {
	case protocol.KeyJoinGroup, protocol.KeySyncGroup, protocol.KeyHeartbeat, protocol.KeyLeaveGroup,
		protocol.KeyOffsetCommit, protocol.KeyOffsetFetch, protocol.KeyTxnOffsetCommit,
		protocol.KeyConsumerGroupHeartbeat, protocol.KeyShareGroupHeartbeat, protocol.KeyStreamsGroupHeartbeat:
		return true
	}
	return false
}

// group appends the group, member and generation or epoch.
func (s *subjectBuf) group(fx *facts.Exchange) {
	g := &fx.Group
	switch {
	case g.ID != "" && len(fx.Groups) > 1:
		s.list("group=", s.unnamed(protocol.RoleGroupID, fx.Groups)) // OffsetFetch v8+: a batch of groups
	case g.ID != "":
		s.word("group=", g.ID)
	case len(fx.Groups) > 0 && fx.Key == protocol.KeyListGroups:
		s.word("groups: ", strconv.Itoa(len(fx.Groups)))
	case len(fx.Groups) > 0:
		s.list("groups=", fx.Groups)
	}
	s.described(fx.Described)
	if !groupAPI(fx.Key) {
		return
	}
	member := g.MemberID
	if member == "" {
		member = g.AssignedMemberID // a first JoinGroup: assigned by the broker
	}
	if member == "" && len(g.Members) > 0 && fx.Key == protocol.KeyLeaveGroup {
		// LeaveGroup v3+ names its members in a batch: by member ID, or
		// by instance ID alone (an admin removing static members, KIP-345).
		var ids, insts []string
		for i := range g.Members {
			if m := &g.Members[i]; m.ID != "" {
				ids = append(ids, shortID(m.ID))
			} else if m.InstanceID != "" {
				insts = append(insts, m.InstanceID)
			}
		}
		if len(ids) == 1 {
			s.word("member=", ids[0])
		} else {
			s.list("members=", ids)
		}
		if g.InstanceID == "" {
			s.list("instances=", insts)
		}
	}
	if member != "" {
		s.word("member=", shortID(member))
	}
	if g.InstanceID != "" {
		s.word("instance=", g.InstanceID)
	}
	heartbeat := fx.Key == protocol.KeyConsumerGroupHeartbeat || fx.Key == protocol.KeyShareGroupHeartbeat ||
		fx.Key == protocol.KeyStreamsGroupHeartbeat
	switch {
	case g.HasGeneration && g.Generation >= 0:
		s.word("gen=", strconv.FormatInt(int64(g.Generation), 10))
	case heartbeat && (g.HasEpoch || g.HasAssigned):
		s.epoch(g)
	case g.HasEpoch && g.MemberEpoch >= 0:
		s.word("epoch=", strconv.FormatInt(int64(g.MemberEpoch), 10)) // -1: not a member (an admin's OffsetFetch)
	case g.HasGenOrEpoch && g.GenerationOrEpoch >= 0:
		// OffsetCommit v9+, TxnOffsetCommit: a generation or a member
		// epoch, and no exchange of the group said which.
		s.word("gen/epoch=", strconv.FormatInt(int64(g.GenerationOrEpoch), 10))
	}
	if fx.Key == protocol.KeyJoinGroup && g.Leader != "" && g.Leader == member {
		s.word("leader", "")
	}
	reason := g.Reason
	if reason == "" && len(g.Members) > 0 && fx.Key == protocol.KeyLeaveGroup {
		reason = g.Members[0].Reason
	}
	if reason != "" {
		s.sep()
		s.b = append(s.b, "reason="...)
		s.b = strconv.AppendQuote(s.b, reason)
	}
}

// described appends how many members each group a describe response
// describes has, in its order ("members: 3,2"; "-" for a group the
// broker answered with an error), and when it describes one KIP-848
// (share, streams) group, the group's epoch ("group-epoch=5").
func (s *subjectBuf) described(ds []facts.DescribedGroup) {
	if len(ds) == 0 {
		return
	}
	counts := make([]string, 0, len(ds))
	ok := false
	for i := range ds {
		if ds[i].Error != 0 {
			counts = append(counts, "-")
			continue
		}
		ok = true
		counts = append(counts, strconv.Itoa(len(ds[i].Members)))
	}
	if !ok {
		return
	}
	s.list("members: ", counts)
	if len(ds) == 1 && ds[0].Epoch >= 0 {
		s.word("group-epoch=", strconv.FormatInt(int64(ds[0].Epoch), 10))
	}
}

// epoch appends a KIP-848 member epoch: the request's, "→" the
// response's when it differs; -1 is a member leaving, -2 a static member
// leaving (ConsumerGroupHeartbeatRequest.json).
func (s *subjectBuf) epoch(g *facts.Group) {
	s.sep()
	s.b = append(s.b, "epoch="...)
	switch {
	case g.HasEpoch && g.HasAssigned && g.AssignedEpoch != g.MemberEpoch && g.AssignedEpoch >= 0:
		s.b = strconv.AppendInt(s.b, int64(g.MemberEpoch), 10)
		s.b = append(s.b, "→"...)
		s.b = strconv.AppendInt(s.b, int64(g.AssignedEpoch), 10)
	case g.HasEpoch:
		s.b = strconv.AppendInt(s.b, int64(g.MemberEpoch), 10)
	default:
		s.b = strconv.AppendInt(s.b, int64(g.AssignedEpoch), 10)
	}
	if g.HasEpoch {
		switch g.MemberEpoch {
		case -1:
			s.b = append(s.b, " leave"...)
		case -2:
			s.b = append(s.b, " static leave"...)
		}
	}
}

// producer appends the transactional ID, producer ID and epoch.
func (s *subjectBuf) producer(fx *facts.Exchange) {
	p := &fx.Producer
	if p.HasTxnID && p.TransactionalID != "" {
		s.word("txn=", p.TransactionalID)
	}
	var ids []string
	for i := range fx.Transactions {
		if id := fx.Transactions[i].TransactionalID; id != "" {
			ids = append(ids, id)
		}
	}
	switch {
	case fx.Key == protocol.KeyListTransactions && len(fx.Transactions) > 0:
		s.word("txns: ", strconv.Itoa(len(fx.Transactions)))
	case len(ids) == 1 && !p.HasTxnID:
		s.word("txn=", ids[0])
	case len(ids) > 0:
		s.list("txns=", s.unnamed(protocol.RoleTransactionalID, ids))
	}
	id, epoch := p.ID, p.Epoch
	hasID, hasEpoch := p.HasID && p.ID >= 0, p.HasEpoch && p.Epoch >= 0
	if !hasID && len(fx.Transactions) == 1 && fx.Transactions[0].HasProducer {
		t := &fx.Transactions[0]
		id, epoch, hasID, hasEpoch = t.ProducerID, t.ProducerEpoch, t.ProducerID >= 0, t.ProducerEpoch >= 0
	}
	if !hasID && fx.Key == protocol.KeyProduce {
		// An idempotent or transactional producer names itself in its batches.
		if r := firstProducer(fx); r != nil {
			id, epoch, hasID, hasEpoch = r.ProducerID, r.ProducerEpoch, true, r.ProducerEpoch >= 0
		}
	}
	newID := p.HasNew && p.NewID >= 0
	newEpoch := p.HasNew && p.NewEpoch >= 0
	switch {
	case hasID && newID && p.NewID != id:
		s.word("pid=", strconv.FormatInt(id, 10)+"→"+strconv.FormatInt(p.NewID, 10))
	case hasID:
		s.word("pid=", strconv.FormatInt(id, 10))
	case newID:
		s.word("pid=", strconv.FormatInt(p.NewID, 10))
	}
	switch {
	case hasEpoch && newEpoch && p.NewEpoch != epoch:
		s.word("epoch=", strconv.FormatInt(int64(epoch), 10)+"→"+strconv.FormatInt(int64(p.NewEpoch), 10))
	case hasEpoch && hasID:
		s.word("epoch=", strconv.FormatInt(int64(epoch), 10))
	case newEpoch:
		s.word("epoch=", strconv.FormatInt(int64(p.NewEpoch), 10))
	}
	// KIP-939: a two-phase-commit producer, one keeping the transaction
	// it prepared, and the ID and epoch of that transaction.
	if p.Enable2PC {
		s.word("2pc", "")
	}
	if p.KeepPrepared {
		s.word("keep-prepared", "")
	}
	if p.HasOngoing && p.OngoingID >= 0 {
		s.word("ongoing-pid=", strconv.FormatInt(p.OngoingID, 10))
		if p.OngoingEpoch >= 0 {
			s.word("ongoing-epoch=", strconv.FormatInt(int64(p.OngoingEpoch), 10))
		}
	}
}

// firstProducer returns the first record summary with a producer ID.
func firstProducer(fx *facts.Exchange) *facts.Records {
	for i := range fx.Topics {
		for j := range fx.Topics[i].Partitions {
			if r := fx.Topics[i].Partitions[j].Records; r != nil && r.HasProducer && r.ProducerID >= 0 {
				return r
			}
		}
	}
	return nil
}

// api appends what particular APIs add.
func (s *subjectBuf) api(e *dissect.Exchange, fx *facts.Exchange) {
	switch fx.Key {
	case protocol.KeyFindCoordinator:
		s.coordinators(fx.Coordinators)
	case protocol.KeyEndTxn:
		switch fx.Commit {
		case 1:
			s.word("COMMIT", "")
		case 0:
			s.word("ABORT", "")
		}
	case protocol.KeyFetch, protocol.KeyShareFetch:
		switch {
		case fx.IsolationName != "":
			s.word(fx.IsolationName, "")
		case fx.Isolation >= 0:
			s.word("isolation=", strconv.Itoa(int(fx.Isolation)))
		}
	case protocol.KeySaslAuthenticate:
		// appendSASL writes what the dissector found; the token fills
		// in what it did not.
		if m := fx.SASL.Mechanism; m != "" && e.Mechanism == "" {
			s.word("mechanism=", m)
		}
		if u := fx.SASL.User; u != "" && e.User == "" {
			s.word("user=", u)
		}
	}
	for i := range fx.Resources {
		r := &fx.Resources[i]
		if r.Type == resourceTopic {
			continue // in the topic list
		}
		name := r.Name
		if name == "" {
			name = "(default)" // a broker resource named "": the cluster-wide default
		}
		tn := r.TypeName
		if tn == "" {
			tn = "type(" + strconv.Itoa(int(r.Type)) + ")"
		}
		s.word(tn+":", name)
	}
}

// Kafka's resource type of a topic, in both the config and the ACL
// numbering.
const resourceTopic = 2

// coordinators appends the keys asked, typed by key type, and the
// coordinator each maps to: "group=G → node 0 127.0.0.1:9092".
func (s *subjectBuf) coordinators(cs []facts.Coordinator) {
	for i := range cs {
		c := &cs[i]
		if i == maxSubjectList {
			s.b = append(s.b, " +"...)
			s.b = strconv.AppendInt(s.b, int64(len(cs)-i), 10)
			s.b = append(s.b, " more"...)
			break
		}
		if i > 0 {
			s.b = append(s.b, ',')
		}
		kind := "group="
		switch c.KeyType {
		case 0:
		case 1:
			kind = "txn="
		case 2:
			kind = "share="
		default:
			kind = "keytype" + strconv.Itoa(int(c.KeyType)) + "="
		}
		s.word(kind, c.Key)
		if c.Found {
			s.b = append(s.b, " → node "...)
			s.b = strconv.AppendInt(s.b, int64(c.NodeID), 10)
			s.b = append(s.b, ' ')
			s.b = termsafe.AppendQuote(s.b, c.Host)
			s.b = append(s.b, ':')
			s.b = strconv.AppendInt(s.b, int64(c.Port), 10)
		}
	}
}

// ListOffsetsTimestamp names the special timestamps of a ListOffsets
// request (ListOffsetsRequest.json; KIP-734 for -3, KIP-1005 for -4 and
// -5): -1 "latest", -2 "earliest", -3 "max-timestamp", -4
// "earliest-local", -5 "latest-tiered"; any other value is a time in
// milliseconds since the epoch, shown in UTC ("2026-01-02T03:04:05.678Z").
func ListOffsetsTimestamp(ts int64) string {
	switch ts {
	case -1:
		return "latest"
	case -2:
		return "earliest"
	case -3:
		return "max-timestamp"
	case -4:
		return "earliest-local"
	case -5:
		return "latest-tiered"
	}
	if ts < 0 {
		return strconv.FormatInt(ts, 10)
	}
	return time.UnixMilli(ts).UTC().Format("2006-01-02T15:04:05.000Z")
}

// shortID shortens a member ID for one line. A classic member ID is the
// client ID, "-" and a UUID the coordinator made (hex digits, with or
// without dashes): its last hex part stands for it
// ("capgen-kgo-group-03353442990c…" → "03353442…"). Any other ID (the
// 22-character base64 Uuid of a KIP-848 member, a client's own) is cut to
// its first 8 characters. Both end in "…" when cut.
func shortID(id string) string {
	if i := strings.LastIndexByte(id, '-'); i >= 0 && len(id)-i-1 >= 8 && isHex(id[i+1:]) {
		id = id[i+1:]
	}
	if r := []rune(id); len(r) > 8 {
		return string(r[:8]) + "…"
	}
	return id
}

// isHex says whether s is only hexadecimal digits.
func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// bodyOf returns the body node of a decoded frame: the root's child named
// "body" or, failing that, its last struct child that is not the header; a
// root without a header is itself the body.
func bodyOf(t *protocol.Tree) *protocol.Node {
	if t == nil || t.Root == nil {
		return nil
	}
	if !isFrameRoot(t.Root) {
		return t.Root
	}
	_, _, b := protocol.FrameParts(t.Root)
	return b
}

// headerOf returns the header node of a decoded frame, or nil.
func headerOf(t *protocol.Tree) *protocol.Node {
	if t == nil || t.Root == nil || !isFrameRoot(t.Root) {
		return nil
	}
	_, h, _ := protocol.FrameParts(t.Root)
	return h
}

// ErrorCount is one Kafka error name seen in a response, how often, and
// where.
type ErrorCount struct {
	Name  string `json:"name"`  // Kafka's name ("NOT_LEADER_OR_FOLLOWER"), or UNKNOWN(code)
	Code  int64  `json:"code"`  // the error code as on the wire
	Count int    `json:"count"` // how many error code fields carried it
	// Places are what the error belongs to, each once: a topic, a topic
	// with partitions ("orders[0,3]"), or the member, group,
	// transactional ID, resource or coordinator key whose entry carried it;
	// empty for an error of the whole response.
	Places []string `json:"places"`
	// Message is the first non-empty ErrorMessage the broker sent with it.
	Message string `json:"message"`
}

// Errors returns the non-zero error codes of e's response, from its facts
// (every field whose role is an error code: top-level, per topic, per
// partition, per member...), by code in order of first appearance, with
// where each occurred. It returns nil when the response has none or was
// not decoded.
func Errors(e *dissect.Exchange) []ErrorCount {
	if e == nil {
		return nil
	}
	return errorCounts(nil, e.Facts())
}

// errorCounts appends fx's errors to out, grouped by code.
func errorCounts(out []ErrorCount, fx *facts.Exchange) []ErrorCount {
	type where struct {
		topic int
		parts []int32
	}
	var wheres [][]where
	for i := range fx.Errors {
		er := &fx.Errors[i]
		k := -1
		for j := range out {
			if out[j].Code == int64(er.Code) {
				k = j
				break
			}
		}
		if k < 0 {
			out = append(out, ErrorCount{Name: er.Name, Code: int64(er.Code)})
			wheres = append(wheres, nil)
			k = len(out) - 1
		}
		ec := &out[k]
		ec.Count++
		if ec.Message == "" {
			ec.Message = er.Message
		}
		switch {
		case er.Topic >= 0:
			ws := wheres[k]
			w := -1
			for j := range ws {
				if ws[j].topic == er.Topic {
					w = j
				}
			}
			if w < 0 {
				ws = append(ws, where{topic: er.Topic})
				w = len(ws) - 1
			}
			if er.Partition >= 0 {
				ws[w].parts = append(ws[w].parts, er.Partition)
			}
			wheres[k] = ws
		case er.Scope.Role != protocol.RoleNone:
			p := scopePlace(er.Scope)
			if !containsString(ec.Places, p) {
				ec.Places = append(ec.Places, p)
			}
		}
	}
	for k := range out {
		var topicPlaces []string
		for _, w := range wheres[k] {
			p := termsafe.Quote(fx.Topics[w.topic].Label())
			if len(w.parts) > 0 {
				var b []byte
				b = append(b, p...)
				b = append(b, '[')
				for j, pi := range w.parts {
					if j > 0 {
						b = append(b, ',')
					}
					b = strconv.AppendInt(b, int64(pi), 10)
				}
				p = string(append(b, ']'))
			}
			topicPlaces = append(topicPlaces, p)
		}
		out[k].Places = append(topicPlaces, out[k].Places...)
	}
	return out
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// scopePlace names the entity an error belongs to.
func scopePlace(sc facts.Scope) string {
	switch sc.Role {
	case protocol.RoleMemberID:
		return "member=" + shortID(sc.ID)
	case protocol.RoleGroupInstanceID:
		return "instance=" + sc.ID
	case protocol.RoleGroupID:
		return "group=" + sc.ID
	case protocol.RoleTransactionalID:
		return "txn=" + sc.ID
	case protocol.RoleCoordinatorKey:
		return "key=" + sc.ID
	case protocol.RoleProducerID:
		return "pid=" + sc.ID
	}
	return sc.ID
}

// maxErrorMessage is the longest ErrorMessage a line shows, in characters.
const maxErrorMessage = 60

// shortMessage cuts an error message to maxErrorMessage characters.
func shortMessage(m string) string {
	if r := []rune(m); len(r) > maxErrorMessage {
		m = string(r[:maxErrorMessage-1]) + "…"
	}
	return m
}
