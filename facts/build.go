package facts

import (
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/kwire/kwire/internal/poison"
	"github.com/kwire/kwire/protocol"
)

// Of builds the facts of one exchange of API key key at version ver from
// its request and response trees (frames as protocol.Decoder builds them,
// or bodies; either may be nil, or hold a body the decoder could not
// decode, which contributes nothing). The request is read first, then the
// response; topics and partitions named by both are merged.
func Of(key, ver int16, req, resp *protocol.Tree) *Exchange {
	fx, ok := exchanges.Get().(*Exchange)
	if !ok {
		fx = new(Exchange)
	}
	*fx = Exchange{Key: key, Version: ver, ThrottleMs: -1, Commit: -1, Isolation: -1, TimeoutMs: -1, MaxWaitMs: -1}
	fx.Group.SessionTimeoutMs, fx.Group.RebalanceTimeoutMs, fx.Group.HeartbeatIntervalMs = -1, -1, -1
	b := builder{fx: fx}
	b.tree(req, false)
	if key == protocol.KeyProduce && !fx.Producer.HasID {
		// A Produce names its producer in its record batches (KIP-98):
		// the first batch's producer ID and epoch, as the line shows them.
		fx.Producer.fromRecords(fx.Topics)
	}
	b.tree(resp, true)
	return fx
}

// fromRecords sets p's ID and epoch from the first record batch of topics
// that has a producer (an idempotent or transactional one).
func (p *Producer) fromRecords(topics []Topic) {
	for i := range topics {
		for j := range topics[i].Partitions {
			if r := topics[i].Partitions[j].Records; r != nil && r.HasProducer && r.ProducerID >= 0 {
				p.ID, p.HasID, p.Epoch, p.HasEpoch = r.ProducerID, true, r.ProducerEpoch, true
				return
			}
		}
	}
}

// Recycle hands fx, which nothing refers to any more, back for a later Of
// to fill: the Exchange itself (about 600 bytes, most of them the group's
// fields, which most exchanges leave empty) is reused, not what it holds
// (its slices, strings and the structs it points to may be kept: they are
// never reused). kwire read's one-line mode recycles every exchange's.
// When released memory is poisoned (internal/poison), fx is overwritten
// with values no exchange states, its topic named RELEASED, and not
// reused.
func Recycle(fx *Exchange) {
	if fx == nil {
		return
	}
	if poison.Released {
		*fx = Exchange{Key: -0x5a5a, Version: -0x5a5a, Topics: []Topic{{Name: poison.Marker}},
			Errors: []Error{{Code: -0x5a5a, Name: poison.Marker, Message: poison.Marker, Topic: -1, Partition: -1}}}
		return
	}
	*fx = Exchange{}
	exchanges.Put(fx)
}

// exchanges holds recycled Exchanges (Recycle) for Of. As every
// sync.Pool, it holds them at most until the second garbage collection
// after: no more than were in use.
var exchanges sync.Pool // of *Exchange, zeroed

// maxDepth bounds the walk; the decoder nests far less.
const maxDepth = 64

// indexFrom is the count of topics (or of a topic's partitions) from which
// they are looked up by map: a Metadata response may name 100,000.
const indexFrom = 32

type builder struct {
	fx       *Exchange
	t        *protocol.Tree
	response bool

	topicByName map[ownedName]int
	topicByID   map[ownedID]int
	groupSeen   map[string]bool
	members     *memberIndex // past indexFrom members of fx.Group

	keyType     int8 // FindCoordinator's KeyType, for the keys of v4+'s CoordinatorKeys
	keyTypeName string
	hasKeyType  bool
}

// scope is where the walk is: the entities the enclosing structs named.
type scope struct {
	top    bool // the message body itself
	topic  int  // index in fx.Topics, -1
	part   int  // index in that topic's Partitions, -1
	member int  // index in fx.Group.Members, -1
	txn    int  // index in fx.Transactions, -1
	res    int  // index in fx.Resources, -1
	desc   int  // index in fx.Described, -1
	dmem   int  // index in that group's Members, -1
	coord  int  // index in fx.Coordinators, -1
	// foreign says an enclosing struct named a group other than the
	// exchange's (DescribeGroups results, OffsetFetch v8+ batches): its
	// members are not the exchange's group's. groupTop says the struct
	// is the exchange's group's entry in a batch (OffsetFetch v8+).
	foreign, groupTop bool
	ent               Scope
	owner             Scope // the batch entry topics below belong to (Topic.Owner)
}

func (b *builder) tree(t *protocol.Tree, response bool) {
	if t == nil || t.Root == nil {
		return
	}
	body := bodyOf(t.Root)
	if body == nil || body.Kind != protocol.KindStruct {
		return
	}
	b.t, b.response = t, response
	b.walk(body, scope{top: true, topic: -1, part: -1, member: -1, txn: -1, res: -1, coord: -1, desc: -1, dmem: -1}, 0)
}

// bodyOf returns the message body of a decoded frame, or the root itself
// when it is a body.
func bodyOf(root *protocol.Node) *protocol.Node {
	if root.Type == "frame" {
		_, _, body := protocol.FrameParts(root)
		return body
	}
	return root
}

// view holds the role-bearing direct children of one struct (a known
// tagged field counts as a direct child), the first of each role.
type view struct {
	topicName, topicID, part, partList              *protocol.Node
	errCode, errMsg                                 *protocol.Node
	errCode2, errMsg2                               *protocol.Node // a struct's second error (ShareFetch's AcknowledgeErrorCode)
	group, member, instance, gen, epoch, genOrEpoch *protocol.Node
	ptype, pname, leader, reason, sessTO, rebTO     *protocol.Node
	hbInterval, abortedFirst                        *protocol.Node
	groupEpoch, assignEpoch, groupState, clientID   *protocol.Node
	lastSeq, lastTS, coordEpoch, txnStart           *protocol.Node
	enable2PC, keepPrepared, ongoingID, ongoingEp   *protocol.Node
	txnID, pid, pepoch, committed                   *protocol.Node
	verifyOnly, validateOnly                        *protocol.Node
	broker, host, port, coordKey, coordType         *protocol.Node
	resType, resName, pattern                       *protocol.Node
	cfgName, cfgValue, cfgSens, cfgType             *protocol.Node
	offsets                                         [numOffsetKinds]*protocol.Node
	meta, records, aborted                          *protocol.Node
	throttle, acks, timeout, maxWait, isolation     *protocol.Node
	swName, swVersion, featEpoch, clusterID         *protocol.Node
	apiKey, minVer, maxVer, featName                *protocol.Node
}

func set(p **protocol.Node, n *protocol.Node) {
	if *p == nil {
		*p = n
	}
}

func (v *view) add(c *protocol.Node) {
	arr := c.Kind == protocol.KindArray
	switch c.Role() {
	case protocol.RoleTopicName:
		if !arr {
			set(&v.topicName, c)
		}
	case protocol.RoleTopicID:
		if !arr {
			set(&v.topicID, c)
		}
	case protocol.RolePartition:
		if arr {
			set(&v.partList, c)
		} else {
			set(&v.part, c)
		}
	case protocol.RoleErrorCode:
		if v.errCode == nil {
			v.errCode = c
		} else {
			set(&v.errCode2, c)
		}
	case protocol.RoleErrorMessage:
		// A message follows its code in every schema.
		if v.errCode2 != nil {
			set(&v.errMsg2, c)
		} else {
			set(&v.errMsg, c)
		}
	case protocol.RoleGroupID:
		if !arr {
			set(&v.group, c)
		}
	case protocol.RoleMemberID:
		set(&v.member, c)
	case protocol.RoleGroupInstanceID:
		set(&v.instance, c)
	case protocol.RoleGenerationID:
		set(&v.gen, c)
	case protocol.RoleMemberEpoch:
		set(&v.epoch, c)
	case protocol.RoleGenerationOrEpoch:
		set(&v.genOrEpoch, c)
	case protocol.RoleGroupProtocolType:
		set(&v.ptype, c)
	case protocol.RoleGroupProtocolName:
		set(&v.pname, c)
	case protocol.RoleGroupState:
		set(&v.groupState, c)
	case protocol.RoleMemberClientID:
		set(&v.clientID, c)
	case protocol.RoleGroupLeader:
		set(&v.leader, c)
	case protocol.RoleGroupReason:
		set(&v.reason, c)
	case protocol.RoleSessionTimeout:
		set(&v.sessTO, c)
	case protocol.RoleRebalanceTimeout:
		set(&v.rebTO, c)
	case protocol.RoleHeartbeatInterval:
		set(&v.hbInterval, c)
	case protocol.RoleGroupEpoch:
		set(&v.groupEpoch, c)
	case protocol.RoleAssignmentEpoch:
		set(&v.assignEpoch, c)
	case protocol.RoleAbortedFirst:
		set(&v.abortedFirst, c)
	case protocol.RoleTransactionalID:
		if !arr {
			set(&v.txnID, c)
		}
	case protocol.RoleProducerID:
		if !arr {
			set(&v.pid, c)
		}
	case protocol.RoleProducerEpoch:
		set(&v.pepoch, c)
	case protocol.RoleTxnCommitted:
		set(&v.committed, c)
	case protocol.RoleTxnVerifyOnly:
		set(&v.verifyOnly, c)
	case protocol.RoleTxnEnable2PC:
		set(&v.enable2PC, c)
	case protocol.RoleTxnKeepPrepared:
		set(&v.keepPrepared, c)
	case protocol.RoleOngoingProducerID:
		set(&v.ongoingID, c)
	case protocol.RoleOngoingProducerEpoch:
		set(&v.ongoingEp, c)
	case protocol.RoleLastSequence:
		set(&v.lastSeq, c)
	case protocol.RoleLastTimestamp:
		set(&v.lastTS, c)
	case protocol.RoleCoordinatorEpoch:
		set(&v.coordEpoch, c)
	case protocol.RoleTxnStartOffset:
		set(&v.txnStart, c)
	case protocol.RoleValidateOnly:
		set(&v.validateOnly, c)
	case protocol.RoleBrokerID:
		if !arr {
			set(&v.broker, c)
		}
	case protocol.RoleHost:
		set(&v.host, c)
	case protocol.RolePort:
		set(&v.port, c)
	case protocol.RoleCoordinatorKey:
		if !arr {
			set(&v.coordKey, c)
		}
	case protocol.RoleCoordinatorType:
		set(&v.coordType, c)
	case protocol.RoleResourceType:
		set(&v.resType, c)
	case protocol.RoleResourceName:
		set(&v.resName, c)
	case protocol.RolePatternType:
		set(&v.pattern, c)
	case protocol.RoleConfigName:
		set(&v.cfgName, c)
	case protocol.RoleConfigValue:
		set(&v.cfgValue, c)
	case protocol.RoleConfigSensitive:
		set(&v.cfgSens, c)
	case protocol.RoleConfigType:
		set(&v.cfgType, c)
	case protocol.RoleBaseOffset:
		set(&v.offsets[OffsetBase], c)
	case protocol.RoleFetchOffset:
		set(&v.offsets[OffsetFetch], c)
	case protocol.RoleHighWatermark:
		set(&v.offsets[OffsetHighWatermark], c)
	case protocol.RoleLastStableOffset:
		set(&v.offsets[OffsetLastStable], c)
	case protocol.RoleLogStartOffset:
		set(&v.offsets[OffsetLogStart], c)
	case protocol.RoleCommittedOffset:
		set(&v.offsets[OffsetCommitted], c)
	case protocol.RoleListedOffset:
		if arr {
			// ListOffsets v0's OldStyleOffsets: the offsets asked for,
			// latest first; the first is the answer a later version gives.
			if es := elements(c); len(es) > 0 {
				set(&v.offsets[OffsetListed], es[0])
			}
		} else {
			set(&v.offsets[OffsetListed], c)
		}
	case protocol.RoleListTimestamp:
		set(&v.offsets[OffsetListTimestamp], c)
	case protocol.RoleEndOffset:
		set(&v.offsets[OffsetEnd], c)
	case protocol.RoleLowWatermark:
		set(&v.offsets[OffsetLowWatermark], c)
	case protocol.RoleDeletionOffset:
		set(&v.offsets[OffsetDeletion], c)
	case protocol.RoleLeaderEpoch:
		set(&v.offsets[OffsetLeaderEpoch], c)
	case protocol.RoleCommittedMeta:
		set(&v.meta, c)
	case protocol.RoleRecords:
		set(&v.records, c)
	case protocol.RoleAbortedTxns:
		set(&v.aborted, c)
	case protocol.RoleThrottle:
		set(&v.throttle, c)
	case protocol.RoleAcks:
		set(&v.acks, c)
	case protocol.RoleRequestTimeout:
		set(&v.timeout, c)
	case protocol.RoleMaxWait:
		set(&v.maxWait, c)
	case protocol.RoleIsolation:
		set(&v.isolation, c)
	case protocol.RoleClusterID:
		set(&v.clusterID, c)
	case protocol.RoleClientSoftwareName:
		set(&v.swName, c)
	case protocol.RoleClientSoftwareVersion:
		set(&v.swVersion, c)
	case protocol.RoleFeaturesEpoch:
		set(&v.featEpoch, c)
	case protocol.RoleAPIKey:
		set(&v.apiKey, c)
	case protocol.RoleMinVersion:
		set(&v.minVer, c)
	case protocol.RoleMaxVersion:
		set(&v.maxVer, c)
	case protocol.RoleFeatureName:
		set(&v.featName, c)
	}
}

// Value accessors: a node that is absent, null or of another kind gives
// ok false.

func intOf(n *protocol.Node) (int64, bool) {
	if n == nil || n.Flags&(protocol.FlagNull|protocol.FlagRedacted) != 0 || (n.Kind != protocol.KindInt && n.Kind != protocol.KindBool) {
		return 0, false
	}
	return n.Int, true
}

func strOf(n *protocol.Node) (string, bool) {
	if n == nil || n.Flags&(protocol.FlagNull|protocol.FlagRedacted) != 0 || n.Kind != protocol.KindString {
		return "", false
	}
	return n.Str, true
}

func uuidOf(n *protocol.Node) (TopicID, bool) {
	var id TopicID
	if n == nil || n.Kind != protocol.KindUUID || len(n.Raw) != 16 {
		return id, false
	}
	copy(id[:], n.Raw)
	return id, true
}

// elements returns the elements of an array node (nil when null).
func elements(a *protocol.Node) []*protocol.Node {
	if a == nil || a.Kind != protocol.KindArray || a.Flags&protocol.FlagNull != 0 {
		return nil
	}
	return a.Children
}

// walk reads struct n within scope sc.
func (b *builder) walk(n *protocol.Node, sc scope, depth int) {
	if depth > maxDepth {
		return
	}
	v := viewOf(n)
	fx := b.fx
	in := sc // the scope n's own fields belong to

	// Entities this struct names.
	if v.group != nil {
		if g, ok := strOf(v.group); ok {
			switch {
			case sc.top:
				if fx.Group.ID == "" {
					fx.Group.ID = g
				}
			case fx.Key == protocol.KeyOffsetFetch && (fx.Group.ID == "" || fx.Group.ID == g) && depth == 1:
				// OffsetFetch v8+ batches groups: the first is the
				// exchange's, with its member and epoch.
				fx.Group.ID = g
				b.addGroup(g)
				in.groupTop = true
				in.ent = Scope{Role: protocol.RoleGroupID, ID: g}
				in.owner = in.ent
			default:
				b.addGroup(g)
				in.foreign = g != fx.Group.ID
				in.ent = Scope{Role: protocol.RoleGroupID, ID: g}
				in.owner = in.ent
				if b.response && depth == 1 && describes(fx.Key) {
					in.desc = b.described(g, &v)
				}
			}
		}
	}
	if v.txnID != nil {
		if id, ok := strOf(v.txnID); ok {
			if sc.top {
				fx.Producer.TransactionalID, fx.Producer.HasTxnID = id, true
			} else {
				in.txn = b.transaction(id)
				in.ent = Scope{Role: protocol.RoleTransactionalID, ID: id}
				in.owner = in.ent
			}
		}
	}
	if v.pid != nil && v.txnID == nil && !sc.top && in.owner.Role == protocol.RoleNone {
		// A batch entry named by its producer (WriteTxnMarkers v1+
		// Markers): the topics below are that producer's markers.
		if id, ok := intOf(v.pid); ok {
			in.owner = Scope{Role: protocol.RoleProducerID, ID: strconv.FormatInt(id, 10)}
			in.ent = in.owner // its errors are that producer's
		}
	}
	if v.resType != nil && v.resName != nil {
		in.res = b.resource(v.resType, v.resName, v.pattern)
		if name, ok := strOf(v.resName); ok {
			in.ent = Scope{Role: protocol.RoleResourceName, ID: name}
		}
	}
	if v.coordKey != nil {
		if k, ok := strOf(v.coordKey); ok {
			in.coord = b.coordinator(k, v.coordType)
			in.ent = Scope{Role: protocol.RoleCoordinatorKey, ID: k}
		}
	}
	if v.member != nil && in.desc >= 0 && in.dmem < 0 && !sc.top {
		// A member of a group described.
		if id, ok := strOf(v.member); ok {
			d := &fx.Described[in.desc]
			m := Member{ID: id}
			m.InstanceID, _ = strOf(v.instance)
			m.ClientID, _ = strOf(v.clientID)
			if x, ok := intOf(v.epoch); ok {
				m.Epoch, m.HasEpoch = int32(x), true
			}
			d.Members = append(d.Members, m)
			in.dmem = len(d.Members) - 1
			in.ent = Scope{Role: protocol.RoleMemberID, ID: id}
		}
	} else if v.member != nil && !sc.top && !in.foreign {
		if id, ok := strOf(v.member); ok {
			inst, _ := strOf(v.instance)
			in.member = b.member(id, inst)
			in.ent = Scope{Role: protocol.RoleMemberID, ID: id}
			if id == "" && inst != "" {
				// A LeaveGroup entry the broker did not know, named by
				// the instance ID an admin asked to remove (KIP-345).
				in.ent = Scope{Role: protocol.RoleGroupInstanceID, ID: inst}
			}
		}
	}
	if v.topicName != nil || v.topicID != nil {
		name, okName := strOf(v.topicName)
		id, okID := uuidOf(v.topicID)
		if okName || okID {
			if okName && name == "" && okID {
				okName = false // Produce/Fetch v13: the name field is absent or empty
			}
			if okName && okID && id.IsZero() {
				okID = false // beside a name, the all-zero ID is "no ID" (Metadata by name)
			}
			in.topic = b.topic(name, okName, id, okID, in.owner)
			in.part = -1
			if okName && name != "" && okID && !id.IsZero() {
				fx.IDNames = append(fx.IDNames, IDName{ID: id, Name: name})
			}
			if in.txn >= 0 {
				b.txnTopic(in.txn, name, id, okID, v.partList)
			}
		}
	}
	if v.part != nil && in.topic >= 0 {
		if p, ok := intOf(v.part); ok {
			in.part = b.partition(in.topic, int32(p))
		}
	}
	if v.partList != nil && in.topic >= 0 {
		for _, e := range elements(v.partList) {
			if p, ok := intOf(e); ok {
				b.partition(in.topic, int32(p))
			}
		}
	}

	b.leaves(&v, in)
	b.children(n, in, depth)
}

// leaves applies the values of struct view v in scope in.
func (b *builder) leaves(v *view, in scope) {
	fx := b.fx
	// Errors: the response's non-zero codes.
	if v.errCode != nil && b.response {
		if code, ok := intOf(v.errCode); ok && code != 0 {
			b.addError(int16(code), v.errMsg, in)
		}
		if code, ok := intOf(v.errCode2); ok && code != 0 {
			b.addError(int16(code), v.errMsg2, in)
		}
	}
	if in.part >= 0 {
		p := &fx.Topics[in.topic].Partitions[in.part]
		for k, n := range v.offsets {
			if x, ok := intOf(n); ok {
				if b.response && (answers|1<<OffsetLeaderEpoch)&(1<<k) != 0 {
					p.Offsets.Answer(OffsetKind(k), x)
				} else {
					p.Offsets.Set(OffsetKind(k), x)
				}
			}
		}
		if m, ok := strOf(v.meta); ok && p.Offsets.CommittedMetadata == "" {
			p.Offsets.CommittedMetadata = m
		}
		if v.records != nil && v.records.Kind == protocol.KindRecords && v.records.Flags&protocol.FlagNull == 0 {
			r := summarize(b.t, v.records)
			if p.Records == nil {
				p.Records = r
			} else {
				p.Records.merge(r)
			}
		}
		if v.aborted != nil && p.AbortedTxns < 0 && v.aborted.Flags&protocol.FlagNull == 0 {
			p.AbortedTxns = int32(len(v.aborted.Children))
			for _, e := range v.aborted.Children {
				if len(p.Aborted) == MaxAborted {
					break
				}
				ev := viewOf(e)
				pid, ok1 := intOf(ev.pid)
				first, ok2 := intOf(ev.abortedFirst)
				if ok1 && ok2 {
					p.Aborted = append(p.Aborted, AbortedTxn{ProducerID: pid, FirstOffset: first})
				}
			}
		}
	}
	if in.res >= 0 && v.cfgName != nil {
		b.config(in.res, v)
	} else if in.res < 0 && in.topic >= 0 && v.cfgName != nil {
		// CreateTopics: a topic's configs.
		t := &fx.Topics[in.topic]
		in.res = b.resourceOf(resourceTopic, t.Name, -1)
		b.config(in.res, v)
	}
	if in.coord >= 0 {
		c := &fx.Coordinators[in.coord]
		b.fillCoordinator(c, v)
	}
	if in.txn >= 0 && !in.top {
		t := &fx.Transactions[in.txn]
		if id, ok := intOf(v.pid); ok {
			t.ProducerID, t.HasProducer = id, true
		}
		if x, ok := intOf(v.verifyOnly); ok && x != 0 {
			t.VerifyOnly = true
		}
		if e, ok := intOf(v.pepoch); ok {
			t.ProducerEpoch = int16(e)
		}
	}
	if !in.top && !b.response && fx.Key == protocol.KeyJoinGroup {
		if s, ok := strOf(v.pname); ok {
			fx.Group.Protocols = append(fx.Group.Protocols, s) // the assignors offered
		}
	}
	if in.member >= 0 && !in.top {
		m := &fx.Group.Members[in.member]
		if s, ok := strOf(v.instance); ok && s != "" && m.InstanceID == "" {
			b.setInstance(in.member, s)
		}
		if s, ok := strOf(v.reason); ok && m.Reason == "" {
			m.Reason = s
		}
	}
	if in.groupTop && !in.top {
		b.group(v)
	}
	if !in.top {
		return
	}
	// The body's own fields.
	if x, ok := intOf(v.throttle); ok && b.response {
		fx.ThrottleMs = int32(x)
	}
	if x, ok := intOf(v.acks); ok && !b.response {
		fx.Acks, fx.HasAcks = int16(x), true
	}
	if x, ok := intOf(v.timeout); ok && !b.response && fx.TimeoutMs < 0 {
		fx.TimeoutMs = int32(x)
	}
	if x, ok := intOf(v.maxWait); ok && !b.response {
		fx.MaxWaitMs = int32(x)
	}
	if x, ok := intOf(v.isolation); ok && !b.response {
		fx.Isolation = int8(x)
		fx.IsolationName = protocol.ValueName(v.isolation.Field, x)
	}
	if x, ok := intOf(v.committed); ok && !b.response {
		fx.Commit = int8(x)
	}
	if x, ok := intOf(v.validateOnly); ok && x != 0 && !b.response {
		fx.ValidateOnly = true
	}
	if x, ok := intOf(v.coordType); ok && !b.response {
		b.keyType, b.hasKeyType = int8(x), true
		b.keyTypeName = protocol.ValueName(v.coordType.Field, x)
		for i := range fx.Coordinators {
			fx.Coordinators[i].KeyType, fx.Coordinators[i].KeyTypeName = b.keyType, b.keyTypeName
		}
	}
	b.producer(v)
	b.group(v)
	if x, ok := strOf(v.clusterID); ok && b.response && in.top {
		fx.ClusterID = x
	}
	if x, ok := strOf(v.swName); ok && !b.response {
		fx.Software.Name = x
	}
	if x, ok := strOf(v.swVersion); ok && !b.response {
		fx.Software.Version = x
	}
	if b.response && fx.Key == protocol.KeyApiVersions {
		av := b.apiVersions()
		if x, ok := intOf(v.errCode); ok {
			av.Error = int16(x)
		}
		if x, ok := intOf(v.featEpoch); ok {
			av.FinalizedEpoch = x
		}
	}
	if len(fx.Coordinators) == 1 && b.response && fx.Key == protocol.KeyFindCoordinator {
		// FindCoordinator v0-3 answers its one key at the top level.
		b.fillCoordinator(&fx.Coordinators[0], v)
	}
}

// producer applies the body's transactional and producer fields.
func (b *builder) producer(v *view) {
	p := &b.fx.Producer
	id, okID := intOf(v.pid)
	ep, okEp := intOf(v.pepoch)
	if !b.response {
		if okID && !p.HasID {
			p.ID, p.HasID = id, true
		}
		if okEp && !p.HasEpoch {
			p.Epoch, p.HasEpoch = int16(ep), true
		}
		if x, ok := intOf(v.enable2PC); ok && x != 0 {
			p.Enable2PC = true
		}
		if x, ok := intOf(v.keepPrepared); ok && x != 0 {
			p.KeepPrepared = true
		}
		return
	}
	oid, okOID := intOf(v.ongoingID)
	oep, okOEp := intOf(v.ongoingEp)
	if okOID || okOEp {
		p.HasOngoing, p.OngoingID, p.OngoingEpoch = true, -1, -1
		if okOID {
			p.OngoingID = oid
		}
		if okOEp {
			p.OngoingEpoch = int16(oep)
		}
	}
	if okID || okEp {
		p.HasNew = true
		p.NewID, p.NewEpoch = -1, -1
		if okID {
			p.NewID = id
		}
		if okEp {
			p.NewEpoch = int16(ep)
		}
	}
}

// group applies the body's group fields.
func (b *builder) group(v *view) {
	g := &b.fx.Group
	if s, ok := strOf(v.member); ok {
		if b.response {
			g.AssignedMemberID = s
		} else if g.MemberID == "" {
			g.MemberID = s
		}
	}
	if s, ok := strOf(v.instance); ok && g.InstanceID == "" {
		g.InstanceID = s
	}
	if x, ok := intOf(v.gen); ok && !g.HasGeneration {
		g.Generation, g.HasGeneration = int32(x), true
	}
	if x, ok := intOf(v.genOrEpoch); ok && !g.HasGenOrEpoch {
		g.GenerationOrEpoch, g.HasGenOrEpoch = int32(x), true
		if !mayBeEpoch(b.fx.Key, b.fx.Version) && !g.HasGeneration {
			g.Generation, g.HasGeneration = int32(x), true
		}
	}
	if x, ok := intOf(v.epoch); ok {
		if b.response {
			g.AssignedEpoch, g.HasAssigned = int32(x), true
		} else if !g.HasEpoch {
			g.MemberEpoch, g.HasEpoch = int32(x), true
		}
	}
	if s, ok := strOf(v.ptype); ok && g.ProtocolType == "" {
		g.ProtocolType = s
	}
	if s, ok := strOf(v.pname); ok && g.Protocol == "" {
		g.Protocol = s
	}
	if s, ok := strOf(v.leader); ok {
		g.Leader = s
	}
	if s, ok := strOf(v.reason); ok && g.Reason == "" {
		g.Reason = s
	}
	if x, ok := intOf(v.sessTO); ok && g.SessionTimeoutMs < 0 {
		g.SessionTimeoutMs = int32(x)
	}
	if x, ok := intOf(v.rebTO); ok && g.RebalanceTimeoutMs < 0 {
		g.RebalanceTimeoutMs = int32(x)
	}
	if x, ok := intOf(v.hbInterval); ok && b.response {
		g.HeartbeatIntervalMs = int32(x)
	}
}

// activeProducers records the producers a DescribeProducers response
// lists on partition p (the elements of its ActiveProducers).
func (b *builder) activeProducers(p *Partition, els []*protocol.Node) {
	if p.ActiveProducers < 0 {
		p.ActiveProducers = 0
	}
	p.ActiveProducers += int32(len(els))
	for _, e := range els {
		if len(p.Producers) == MaxProducers {
			break
		}
		if e.Kind != protocol.KindStruct {
			continue
		}
		v := viewOf(e)
		pid, ok := intOf(v.pid)
		if !ok {
			continue
		}
		ap := ActiveProducer{ProducerID: pid, ProducerEpoch: -1, LastSequence: -1, LastTimestamp: -1, CoordinatorEpoch: -1,
			CurrentTxnStartOffset: -1}
		if x, ok := intOf(v.pepoch); ok {
			ap.ProducerEpoch = int32(x)
		}
		if x, ok := intOf(v.lastSeq); ok {
			ap.LastSequence = int32(x)
		}
		if x, ok := intOf(v.lastTS); ok {
			ap.LastTimestamp = x
		}
		if x, ok := intOf(v.coordEpoch); ok {
			ap.CoordinatorEpoch = int32(x)
		}
		if x, ok := intOf(v.txnStart); ok {
			ap.CurrentTxnStartOffset = x
		}
		p.Producers = append(p.Producers, ap)
	}
}

// describes reports whether API key's response describes groups with
// their members (Exchange.Described).
func describes(key int16) bool {
	switch key {
	case protocol.KeyDescribeGroups, protocol.KeyConsumerGroupDescribe, protocol.KeyShareGroupDescribe,
		protocol.KeyStreamsGroupDescribe:
		return true
	}
	return false
}

// described adds the group g a describe response describes, from the
// view v of its struct, and returns its index in fx.Described.
func (b *builder) described(g string, v *view) int {
	d := DescribedGroup{ID: g, Epoch: -1, AssignmentEpoch: -1}
	d.State, _ = strOf(v.groupState)
	d.ProtocolType, _ = strOf(v.ptype)
	d.Protocol, _ = strOf(v.pname)
	if x, ok := intOf(v.groupEpoch); ok {
		d.Epoch = int32(x)
	}
	if x, ok := intOf(v.assignEpoch); ok {
		d.AssignmentEpoch = int32(x)
	}
	if x, ok := intOf(v.errCode); ok {
		d.Error = int16(x)
	}
	b.fx.Described = append(b.fx.Described, d)
	return len(b.fx.Described) - 1
}

// mayBeEpoch reports whether the GenerationIdOrMemberEpoch of API key
// at version ver may be a KIP-848 member epoch: OffsetCommit from v9
// ("the first version that can be used with the new consumer group
// protocol", OffsetCommitRequest.json), TxnOffsetCommit in every version
// that has the field (v3+: its versions did not change with KIP-848).
// Before, it is a classic group's generation.
func mayBeEpoch(key, ver int16) bool {
	switch key {
	case protocol.KeyOffsetCommit:
		return ver >= 9
	case protocol.KeyTxnOffsetCommit:
		return true
	}
	return false
}

// children walks the structs below n and reads its role-bearing arrays
// and embedded structs.
func (b *builder) children(n *protocol.Node, in scope, depth int) {
	child := in
	child.top = false
	for _, c := range n.Children {
		if c.Kind == protocol.KindTaggedFields {
			for _, t := range c.Children {
				b.child(t, in, child, depth)
			}
			continue
		}
		b.child(c, in, child, depth)
	}
}

func (b *builder) child(c *protocol.Node, in, child scope, depth int) {
	fx := b.fx
	switch c.Kind {
	case protocol.KindStruct:
		if c.Flags&protocol.FlagNull == 0 {
			b.walk(c, child, depth+1)
		}
	case protocol.KindArray:
		els := elements(c)
		switch r := c.Role(); {
		case r == protocol.RoleForgotten:
			// An incremental fetch's partitions to forget (KIP-227):
			// not fetched, so not the exchange's topics.
			fx.Forgotten = append(fx.Forgotten, topicPartitions(els)...)
			return
		case r == protocol.RoleOwnedPartitions:
			tps := topicPartitions(els)
			if in.top || depth <= 1 {
				fx.Group.Owned = append(fx.Group.Owned, tps...)
			}
			return
		case (r == protocol.RoleAssignedPartitions || r == protocol.RoleTargetPartitions) && in.dmem >= 0:
			// A described member's assignment, or its target (KIP-848).
			m := &fx.Described[in.desc].Members[in.dmem]
			a := &Assignment{Version: -1, Partitions: topicPartitions(els)}
			if r == protocol.RoleAssignedPartitions {
				m.Assignment = a
			} else {
				m.Target = a
			}
			return
		case r == protocol.RoleAssignedPartitions:
			if in.top || depth <= 1 {
				if fx.Group.Assignment == nil {
					fx.Group.Assignment = &Assignment{Version: -1}
				}
				fx.Group.Assignment.Partitions = append(fx.Group.Assignment.Partitions, topicPartitions(els)...)
			}
			return
		case r == protocol.RoleAbortedTxns:
			return // counted per partition; their producer IDs are not the exchange's
		case r == protocol.RoleActiveProducers:
			// DescribeProducers: the partition's producers, not the
			// exchange's.
			if in.part >= 0 && b.response && c.Flags&protocol.FlagNull == 0 {
				b.activeProducers(&fx.Topics[in.topic].Partitions[in.part], els)
			}
			return
		case r == protocol.RoleAPIRanges && b.response:
			av := b.apiVersions()
			av.Ranges = slices.Grow(av.Ranges, len(els)) // one allocation, not eight (a broker advertises about 90)
			for _, e := range els {
				v := viewOf(e)
				k, ok1 := intOf(v.apiKey)
				lo, ok2 := intOf(v.minVer)
				hi, ok3 := intOf(v.maxVer)
				if ok1 && ok2 && ok3 {
					av.Ranges = append(av.Ranges, APIRange{Key: int16(k), Min: int16(lo), Max: int16(hi)})
				}
			}
			return
		case (r == protocol.RoleSupportedFeatures || r == protocol.RoleFinalizedFeatures) && b.response:
			av := b.apiVersions()
			if r == protocol.RoleSupportedFeatures {
				av.SupportedFeatures = slices.Grow(av.SupportedFeatures, len(els))
			} else {
				av.FinalizedFeatures = slices.Grow(av.FinalizedFeatures, len(els))
			}
			for _, e := range els {
				v := viewOf(e)
				name, _ := strOf(v.featName)
				lo, _ := intOf(v.minVer)
				hi, _ := intOf(v.maxVer)
				f := Feature{Name: name, Min: int16(lo), Max: int16(hi)}
				if r == protocol.RoleSupportedFeatures {
					av.SupportedFeatures = append(av.SupportedFeatures, f)
				} else {
					av.FinalizedFeatures = append(av.FinalizedFeatures, f)
				}
			}
			return
		case len(els) > 0 && els[0].Kind != protocol.KindStruct:
			if r == protocol.RoleTopicName && in.dmem >= 0 {
				// A described member's SubscribedTopicNames (KIP-848).
				m := &fx.Described[in.desc].Members[in.dmem]
				if m.Subscription == nil {
					m.Subscription = &Subscription{Version: -1, Generation: -1}
				}
				for _, e := range els {
					if t, ok := strOf(e); ok {
						m.Subscription.Topics = append(m.Subscription.Topics, t)
					}
				}
			}
			b.primitives(r, els, in.owner)
			return
		}
		for _, e := range els {
			if e.Kind == protocol.KindStruct {
				b.walk(e, child, depth+1)
			}
		}
	case protocol.KindBytes:
		if !b.response && fx.SASL.Mechanism == "" {
			b.sasl(c)
		}
		switch c.Role() {
		case protocol.RoleSubscription:
			if s := subscriptionOf(c); s != nil {
				switch {
				case in.dmem >= 0:
					// A classic group's member described (DescribeGroups).
					if m := &fx.Described[in.desc].Members[in.dmem]; m.Subscription == nil {
						m.Subscription = s
					}
				case in.member >= 0:
					if m := &fx.Group.Members[in.member]; m.Subscription == nil {
						m.Subscription = s
					}
				case !b.response && fx.Group.Subscription == nil:
					fx.Group.Subscription = s
				}
			}
		case protocol.RoleAssignment:
			if a := assignmentOf(c); a != nil {
				switch {
				case in.dmem >= 0:
					if m := &fx.Described[in.desc].Members[in.dmem]; m.Assignment == nil {
						m.Assignment = a
					}
				case in.member >= 0:
					if m := &fx.Group.Members[in.member]; m.Assignment == nil {
						m.Assignment = a
					}
				case b.response && fx.Group.Assignment == nil:
					fx.Group.Assignment = a
				}
			}
		}
	}
}

// primitives reads an array of primitive values with role r.
func (b *builder) primitives(r protocol.Role, els []*protocol.Node, owner Scope) {
	for _, e := range els {
		s, ok := strOf(e)
		switch r {
		case protocol.RoleTopicName:
			if ok && s != "" {
				b.topic(s, true, TopicID{}, false, owner)
			}
		case protocol.RoleGroupID:
			if ok {
				b.addGroup(s)
			}
		case protocol.RoleTransactionalID:
			if ok {
				b.transaction(s)
			}
		case protocol.RoleCoordinatorKey:
			if ok {
				b.coordinator(s, nil)
			}
		}
	}
}

// Entity lookups: each returns the index of the entry, adding it first
// when new.

// topic returns the index of the topic named by name (when okName) and
// id (when okID) in batch entry owner (Topic.Owner), adding it first when
// new.
func (b *builder) topic(name string, okName bool, id TopicID, okID bool, owner Scope) int {
	fx := b.fx
	if okName && name != "" {
		if i, ok := b.findTopicName(name, owner); ok {
			t := &fx.Topics[i]
			if okID && !t.HasID && !id.IsZero() {
				t.ID, t.HasID = id, true
				b.indexID(i)
			}
			t.Resource = false
			return i
		}
	}
	if okID {
		if i, ok := b.findTopicID(id, owner); ok && (!okName || name == "" || fx.Topics[i].Name == "") {
			t := &fx.Topics[i]
			if okName && name != "" {
				t.Name = name
				b.indexName(i)
			}
			t.Resource = false
			return i
		}
	}
	t := Topic{Owner: owner}
	if okName {
		t.Name = name
	}
	if okID {
		t.ID, t.HasID = id, true
	}
	fx.Topics = append(fx.Topics, t)
	i := len(fx.Topics) - 1
	switch {
	case b.topicByName != nil:
		b.indexName(i)
		b.indexID(i)
	case len(fx.Topics) >= indexFrom:
		b.topicByName, b.topicByID = map[ownedName]int{}, map[ownedID]int{}
		for j := range fx.Topics {
			b.indexName(j)
			b.indexID(j)
		}
	}
	return i
}

// ownedName and ownedID key the topic indexes: a name or ID within a
// batch entry (Topic.Owner).
type ownedName struct {
	owner Scope
	name  string
}

type ownedID struct {
	owner Scope
	id    TopicID
}

func (b *builder) indexName(i int) {
	if t := &b.fx.Topics[i]; b.topicByName != nil && t.Name != "" {
		k := ownedName{t.Owner, t.Name}
		if _, ok := b.topicByName[k]; !ok {
			b.topicByName[k] = i
		}
	}
}

func (b *builder) indexID(i int) {
	if t := &b.fx.Topics[i]; b.topicByID != nil && t.HasID {
		k := ownedID{t.Owner, t.ID}
		if _, ok := b.topicByID[k]; !ok {
			b.topicByID[k] = i
		}
	}
}

func (b *builder) findTopicName(name string, owner Scope) (int, bool) {
	if b.topicByName != nil {
		i, ok := b.topicByName[ownedName{owner, name}]
		return i, ok
	}
	for i := range b.fx.Topics {
		if t := &b.fx.Topics[i]; t.Name == name && t.Owner == owner {
			return i, true
		}
	}
	return 0, false
}

func (b *builder) findTopicID(id TopicID, owner Scope) (int, bool) {
	if b.topicByID != nil {
		i, ok := b.topicByID[ownedID{owner, id}]
		return i, ok
	}
	for i := range b.fx.Topics {
		if t := &b.fx.Topics[i]; t.HasID && t.ID == id && t.Owner == owner {
			return i, true
		}
	}
	return 0, false
}

func (b *builder) partition(ti int, idx int32) int {
	t := &b.fx.Topics[ti]
	if t.partAt != nil {
		if i, ok := t.partAt[idx]; ok {
			return i
		}
	} else {
		for i := range t.Partitions {
			if t.Partitions[i].Index == idx {
				return i
			}
		}
	}
	t.Partitions = append(t.Partitions, Partition{Index: idx, AbortedTxns: -1, ActiveProducers: -1})
	i := len(t.Partitions) - 1
	switch {
	case t.partAt != nil:
		t.partAt[idx] = i
	case len(t.Partitions) >= indexFrom:
		t.partAt = make(map[int32]int, 2*indexFrom)
		for j := range t.Partitions {
			t.partAt[t.Partitions[j].Index] = j
		}
	}
	return i
}

func (b *builder) addGroup(g string) {
	if b.groupSeen == nil {
		b.groupSeen = map[string]bool{}
	}
	if b.groupSeen[g] {
		return
	}
	b.groupSeen[g] = true
	b.fx.Groups = append(b.fx.Groups, g)
}

// member returns the index of the member named by id or, when one side
// does not know its member ID, by its static instance ID (an admin's
// LeaveGroup removes members by group.instance.id, KIP-345, and the
// response names their member IDs): a request's entry and its response's
// are one member. It is the first member that matches, as a scan in order
// would find it; past indexFrom members (a JoinGroup response may list
// 100,000) it is found by the index in members, not by a scan.
func (b *builder) member(id, instance string) int {
	g := &b.fx.Group
	i := -1
	if b.members != nil {
		i = b.members.find(g.Members, id, instance)
	} else {
		for j := range g.Members {
			m := &g.Members[j]
			if id != "" && m.ID == id || instance != "" && m.InstanceID == instance && (id == "" || m.ID == "") {
				i = j
				break
			}
		}
	}
	if i >= 0 {
		m := &g.Members[i]
		if m.ID == "" && id != "" {
			m.ID = id
			b.members.setID(i, id)
		}
		if m.InstanceID == "" && instance != "" {
			b.setInstance(i, instance)
		}
		return i
	}
	g.Members = append(g.Members, Member{ID: id, InstanceID: instance})
	i = len(g.Members) - 1
	switch {
	case b.members != nil:
		b.members.add(g.Members, i)
	case len(g.Members) >= indexFrom:
		b.members = &memberIndex{byID: map[string]int{}, byInstance: map[string]int{}, noID: map[string][]int{}}
		for j := range g.Members {
			b.members.add(g.Members, j)
		}
	}
	return i
}

// setInstance sets the static instance ID of member i, which had none.
func (b *builder) setInstance(i int, instance string) {
	m := &b.fx.Group.Members[i]
	m.InstanceID = instance
	b.members.setInstance(b.fx.Group.Members, i, instance)
}

// memberIndex finds a group's members by member ID and by instance ID,
// the first in order of each, as builder.member's scan would. A member's
// ID and instance ID are set once, from empty, never changed after: so
// byID and byInstance only take smaller indexes, and an entry of noID
// that got its member ID (or, impossible, another instance) is stale for
// good and dropped when found at the head.
type memberIndex struct {
	byID       map[string]int   // member ID → first member with it
	byInstance map[string]int   // instance ID → first member with it
	noID       map[string][]int // instance ID → members with it and no member ID, ascending
}

// find returns the first member that id or instance names, -1 if none:
// the first with member ID id, or with instance ID instance and (when id
// is set) no member ID of its own.
func (x *memberIndex) find(ms []Member, id, instance string) int {
	i := -1
	if id != "" {
		if j, ok := x.byID[id]; ok {
			i = j
		}
	}
	if instance != "" {
		j, ok := x.byInstance[instance]
		if id != "" {
			j, ok = x.firstNoID(ms, instance)
		}
		if ok && (i < 0 || j < i) {
			i = j
		}
	}
	return i
}

// firstNoID returns the first member with instance ID instance and no
// member ID, dropping the stale entries before it.
func (x *memberIndex) firstNoID(ms []Member, instance string) (int, bool) {
	l := x.noID[instance]
	for len(l) > 0 && (ms[l[0]].ID != "" || ms[l[0]].InstanceID != instance) {
		l = l[1:]
	}
	if len(l) == 0 {
		delete(x.noID, instance)
		return 0, false
	}
	x.noID[instance] = l
	return l[0], true
}

// add indexes member i, the last of ms.
func (x *memberIndex) add(ms []Member, i int) {
	m := &ms[i]
	if m.ID != "" {
		x.setID(i, m.ID)
	}
	if m.InstanceID != "" {
		x.setInstance(ms, i, m.InstanceID)
	}
}

// setID indexes member i under the member ID it got; x may be nil (no
// index yet).
func (x *memberIndex) setID(i int, id string) {
	if x == nil {
		return
	}
	if j, ok := x.byID[id]; !ok || i < j {
		x.byID[id] = i
	}
}

// setInstance indexes member i under the instance ID it got; x may be
// nil (no index yet).
func (x *memberIndex) setInstance(ms []Member, i int, instance string) {
	if x == nil {
		return
	}
	if j, ok := x.byInstance[instance]; !ok || i < j {
		x.byInstance[instance] = i
	}
	if ms[i].ID == "" {
		l := x.noID[instance]
		k, _ := slices.BinarySearch(l, i)
		x.noID[instance] = slices.Insert(l, k, i)
	}
}

func (b *builder) transaction(id string) int {
	for i := range b.fx.Transactions {
		if b.fx.Transactions[i].TransactionalID == id {
			return i
		}
	}
	b.fx.Transactions = append(b.fx.Transactions, Transaction{TransactionalID: id, ProducerID: -1, ProducerEpoch: -1})
	return len(b.fx.Transactions) - 1
}

// txnTopic records a topic (and its partitions) under transaction ti.
func (b *builder) txnTopic(ti int, name string, id TopicID, okID bool, parts *protocol.Node) {
	t := &b.fx.Transactions[ti]
	for i := range t.Topics {
		if o := &t.Topics[i]; o.Topic == name && o.HasID == okID && o.ID == id {
			return // the response's results repeat the request's topics
		}
	}
	tp := TopicPartitions{Topic: name, ID: id, HasID: okID}
	for _, e := range elements(parts) {
		if p, ok := intOf(e); ok {
			tp.Partitions = append(tp.Partitions, int32(p))
		}
	}
	t.Topics = append(t.Topics, tp)
}

// Kafka's resource and pattern types (ResourceType, PatternType; the
// config and ACL APIs): 2 is a topic in both numberings, 3 a literal
// pattern (KIP-290).
const (
	resourceTopic  = 2
	patternLiteral = 3
)

func (b *builder) resource(typ, name, pattern *protocol.Node) int {
	t, ok1 := intOf(typ)
	s, ok2 := strOf(name)
	if !ok1 {
		return -1
	}
	if !ok2 && name.Flags&protocol.FlagNull == 0 {
		return -1
	}
	pt := int64(-1)
	if p, ok := intOf(pattern); ok {
		pt = p
	}
	i := b.resourceOf(int8(t), s, int8(pt))
	if r := &b.fx.Resources[i]; r.TypeName == "" {
		r.TypeName = protocol.ValueName(typ.Field, t)
		if pt >= 0 {
			r.PatternName = protocol.ValueName(pattern.Field, pt)
		}
	}
	if t == resourceTopic && ok2 && s != "" && s != "*" && (pt < 0 || pt == patternLiteral) {
		// A topic named as a resource ("*" is every topic; a prefix or
		// match pattern names none).
		if _, found := b.findTopicName(s, Scope{}); !found {
			ti := b.topic(s, true, TopicID{}, false, Scope{})
			b.fx.Topics[ti].Resource = true
		}
	}
	return i
}

func (b *builder) resourceOf(typ int8, name string, pattern int8) int {
	for i := range b.fx.Resources {
		if r := &b.fx.Resources[i]; r.Type == typ && r.Name == name && r.Pattern == pattern {
			return i
		}
	}
	b.fx.Resources = append(b.fx.Resources, Resource{Type: typ, Name: name, Pattern: pattern})
	return len(b.fx.Resources) - 1
}

// configPassword is ConfigType PASSWORD (DescribeConfigs v3+, KIP-336).
const configPassword = 9

func (b *builder) config(ri int, v *view) {
	name, ok := strOf(v.cfgName)
	if !ok {
		return
	}
	c := Config{Name: name}
	if v.cfgValue != nil {
		c.Null = v.cfgValue.Flags&protocol.FlagNull != 0
		c.Redacted = v.cfgValue.Flags&protocol.FlagRedacted != 0
		c.Value, _ = strOf(v.cfgValue)
	}
	if x, ok := intOf(v.cfgSens); ok && x != 0 {
		c.Sensitive = true
	}
	if x, ok := intOf(v.cfgType); ok && x == configPassword {
		c.Sensitive = true
	}
	r := &b.fx.Resources[ri]
	r.Configs = append(r.Configs, c)
}

func (b *builder) coordinator(key string, typ *protocol.Node) int {
	for i := range b.fx.Coordinators {
		if c := &b.fx.Coordinators[i]; c.Key == key && !c.Found {
			return i
		}
	}
	kt, ktn := b.keyType, b.keyTypeName
	if x, ok := intOf(typ); ok {
		kt, ktn = int8(x), protocol.ValueName(typ.Field, x)
	} else if len(b.fx.Coordinators) > 0 && !b.hasKeyType {
		kt, ktn = b.fx.Coordinators[0].KeyType, b.fx.Coordinators[0].KeyTypeName
	}
	if ktn == "" && kt == 0 {
		ktn = "group" // FindCoordinator v0 has no KeyType: groups only
	}
	b.fx.Coordinators = append(b.fx.Coordinators, Coordinator{KeyType: kt, KeyTypeName: ktn, Key: key, NodeID: -1, Port: -1})
	return len(b.fx.Coordinators) - 1
}

func (b *builder) fillCoordinator(c *Coordinator, v *view) {
	if x, ok := intOf(v.coordType); ok {
		c.KeyType, c.KeyTypeName = int8(x), protocol.ValueName(v.coordType.Field, x)
	}
	if !b.response {
		return
	}
	if code, ok := intOf(v.errCode); ok && code != 0 {
		c.Error = int16(code)
		return
	}
	node, ok1 := intOf(v.broker)
	host, ok2 := strOf(v.host)
	port, ok3 := intOf(v.port)
	if ok1 && ok2 && ok3 && node >= 0 {
		c.NodeID, c.Host, c.Port, c.Found = int32(node), host, int32(port), true
	}
}

func (b *builder) addError(code int16, msg *protocol.Node, in scope) {
	fx := b.fx
	e := Error{Code: code, Name: protocol.KafkaErrorName(code), Topic: -1, Partition: -1, Scope: in.ent}
	if m, ok := strOf(msg); ok {
		e.Message = m
	} else if msg != nil && msg.Flags&protocol.FlagRedacted != 0 {
		e.Message = WithheldMessage
	}
	if in.topic >= 0 {
		e.Topic = in.topic
		t := &fx.Topics[in.topic]
		if in.part >= 0 {
			p := &t.Partitions[in.part]
			e.Partition = p.Index
			if p.Error == 0 {
				p.Error = code
			}
		} else if t.Error == 0 {
			t.Error = code
		}
	}
	if in.member >= 0 && fx.Group.Members[in.member].Error == 0 {
		fx.Group.Members[in.member].Error = code
	}
	fx.Errors = append(fx.Errors, e)
}

// sasl reads the parts of a SASL token a BYTES node holds (protocol's
// SASL part fields): the mechanism family and the user name, a SCRAM
// saslname decoded (RFC 5802 section 5.1: "=2C" is ',' and "=3D" '=').
func (b *builder) sasl(n *protocol.Node) {
	for _, p := range n.Children {
		m := protocol.SASLMechanismOf(p.Field)
		if m == "" {
			continue
		}
		b.fx.SASL.Mechanism = m
		if p.Role() == protocol.RoleSASLUser && b.fx.SASL.User == "" {
			u := p.Str
			if m == "SCRAM" {
				u = strings.NewReplacer("=2C", ",", "=3D", "=").Replace(u)
			}
			b.fx.SASL.User = u
		}
	}
}

// apiVersions returns the exchange's APIVersions, made on first use.
func (b *builder) apiVersions() *APIVersions {
	if b.fx.APIVersions == nil {
		b.fx.APIVersions = &APIVersions{FinalizedEpoch: -1}
	}
	return b.fx.APIVersions
}

// viewOf classifies the direct children of struct n.
func viewOf(n *protocol.Node) (v view) {
	for _, c := range n.Children {
		if c.Kind == protocol.KindTaggedFields {
			for _, t := range c.Children {
				v.add(t)
			}
			continue
		}
		v.add(c)
	}
	return v
}

// topicPartitions reads an array of topic-partition structs (a member's
// owned or assigned partitions).
func topicPartitions(els []*protocol.Node) []TopicPartitions {
	var out []TopicPartitions
	for _, e := range els {
		if e.Kind != protocol.KindStruct {
			continue
		}
		v := viewOf(e)
		tp := TopicPartitions{}
		tp.Topic, _ = strOf(v.topicName)
		if id, ok := uuidOf(v.topicID); ok {
			tp.ID, tp.HasID = id, true
		}
		for _, p := range elements(v.partList) {
			if x, ok := intOf(p); ok {
				tp.Partitions = append(tp.Partitions, int32(x))
			}
		}
		out = append(out, tp)
	}
	return out
}

// subscriptionOf reads a decoded ConsumerProtocolSubscription (the
// children of a RoleSubscription BYTES node), or a Connect worker's
// ConnectProtocolMetadata into its Worker; nil when it was not decoded.
func subscriptionOf(n *protocol.Node) *Subscription {
	if len(n.Children) == 0 || n.Flags&protocol.FlagNull != 0 {
		return nil
	}
	s := &Subscription{Version: n.Ver, Generation: -1}
	for _, c := range n.Children {
		switch c.Role() {
		case protocol.RoleTopicName:
			for _, e := range elements(c) {
				if t, ok := strOf(e); ok {
					s.Topics = append(s.Topics, t)
				}
			}
		case protocol.RoleOwnedPartitions:
			s.Owned = topicPartitions(elements(c))
		case protocol.RoleGenerationID:
			if x, ok := intOf(c); ok {
				s.Generation = int32(x)
			}
		case protocol.RoleWorkerURL:
			w := s.worker()
			w.URL, _ = strOf(c)
			w.URLWithheld = c.Flags&protocol.FlagRedacted != 0
		case protocol.RoleConfigOffset:
			if x, ok := intOf(c); ok {
				s.worker().ConfigOffset = x
			}
		case protocol.RoleWorkerAllocation:
			s.worker().Allocation = connectAssignmentOf(c)
		}
	}
	return s
}

// worker returns s's Worker, made on first use.
func (s *Subscription) worker() *Worker {
	if s.Worker == nil {
		s.Worker = &Worker{}
	}
	return s.Worker
}

// connectAssignmentOf reads a decoded ConnectProtocolAssignment (a
// RoleAssignment or RoleWorkerAllocation BYTES node), nil when it was not
// decoded or holds no Connect assignment.
func connectAssignmentOf(n *protocol.Node) *ConnectAssignment {
	if len(n.Children) == 0 || n.Flags&protocol.FlagNull != 0 {
		return nil
	}
	var a *ConnectAssignment
	get := func() *ConnectAssignment {
		if a == nil {
			a = &ConnectAssignment{Version: n.Ver}
		}
		return a
	}
	for _, c := range n.Children {
		switch c.Role() {
		case protocol.RoleConnectError:
			if x, ok := intOf(c); ok {
				get().Error = int16(x)
			}
		case protocol.RoleConnectLeader:
			get().Leader, _ = strOf(c)
		case protocol.RoleConnectLeaderURL:
			a := get()
			a.LeaderURL, _ = strOf(c)
			a.LeaderURLWithheld = c.Flags&protocol.FlagRedacted != 0
		case protocol.RoleConfigOffset:
			if x, ok := intOf(c); ok {
				get().ConfigOffset = x
			}
		case protocol.RoleConnectorsAssigned:
			get().Connectors = connectorTasks(elements(c))
		case protocol.RoleConnectorsRevoked:
			get().Revoked = connectorTasks(elements(c))
		case protocol.RoleRebalanceDelay:
			if x, ok := intOf(c); ok {
				get().DelayMs = int32(x)
			}
		}
	}
	return a
}

// connectorTasks reads an array of Connect connector assignments.
func connectorTasks(els []*protocol.Node) []ConnectorTasks {
	var out []ConnectorTasks
	for _, e := range els {
		if e.Kind != protocol.KindStruct {
			continue
		}
		var ct ConnectorTasks
		for _, c := range e.Children {
			switch c.Role() {
			case protocol.RoleConnectorName:
				ct.Connector, _ = strOf(c)
			case protocol.RoleConnectorTasks:
				for _, t := range elements(c) {
					if x, ok := intOf(t); ok {
						ct.Tasks = append(ct.Tasks, int32(x))
					}
				}
			}
		}
		out = append(out, ct)
	}
	return out
}

// assignmentOf reads a decoded ConsumerProtocolAssignment, or a Connect
// worker's ConnectProtocolAssignment into its Connect; nil when it was not
// decoded.
func assignmentOf(n *protocol.Node) *Assignment {
	if len(n.Children) == 0 || n.Flags&protocol.FlagNull != 0 {
		return nil
	}
	a := &Assignment{Version: n.Ver, Connect: connectAssignmentOf(n)}
	for _, c := range n.Children {
		if c.Role() == protocol.RoleAssignedPartitions {
			a.Partitions = topicPartitions(elements(c))
		}
	}
	return a
}
