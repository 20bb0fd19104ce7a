package render

import (
	"strconv"
	"strings"
	"time"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/protocol"
)

// What the one-line subject adds for particular APIs, beyond topics and
// the top-level group, transactional and producer IDs (see Subject):
//
//	FindCoordinator   group=G → node 0 host:port (txn= / share= by KeyType)
//	DescribeGroups    groups=a,b,+3
//	ListGroups        groups: 12 (the response's count)
//	group APIs        group=G member=03353442… gen=3 (JoinGroup and
//	                  SyncGroup lead with the topics of the subscription or
//	                  assignment they carry: orders, orders[0,1])
//	config, ACL APIs  the topics named as resources
//	EndTxn            txn=T COMMIT | ABORT
//	Fetch             read_committed | read_uncommitted (v4+)
//	SaslAuthenticate  mechanism=PLAIN user=alice (from the client token)
//
// ListOffsets puts the timestamp asked and the offset returned inside the
// topic's brackets: orders[0 latest→42,1 earliest→0].

// maxSubjectList is how many IDs a subject lists before "+N".
const maxSubjectList = 3

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

// shortID shortens a member ID for one line: the part after its last "-"
// (client libraries build member IDs as clientID-UUID), cut to 8
// characters with "…" ("capgen-kgo-group-03353442990c…" → "03353442…").
func shortID(id string) string {
	if i := strings.LastIndexByte(id, '-'); i >= 0 && i < len(id)-1 {
		id = id[i+1:]
	}
	if r := []rune(id); len(r) > 8 {
		return string(r[:8]) + "…"
	}
	return id
}

// appendWord appends " k=v" (or "k=v" at the start of the subject).
func appendWord(b []byte, start int, k, v string) []byte {
	if len(b) > start {
		b = append(b, ' ')
	}
	b = append(b, k...)
	if strings.ContainsAny(v, " \t\n\"") || !printable([]byte(v)) {
		return strconv.AppendQuote(b, v)
	}
	return append(b, v...)
}

// strChild returns the string value of the named child, and whether it
// is a non-null string.
func strChild(n *protocol.Node, names ...string) (string, bool) {
	c := child(n, names...)
	if c == nil || c.Kind != protocol.KindString || c.Flags&protocol.FlagNull != 0 {
		return "", false
	}
	return c.Str, true
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
		b = append(b, it...)
	}
	return b
}

// appendAPISubject appends the API-specific part of the subject (see the
// table above); start is where the subject began in b.
func (s *subject) appendAPISubject(b []byte, start int, e *dissect.Exchange) []byte {
	var req, resp *protocol.Node
	if e.Request != nil {
		req = bodyOf(e.Request.Tree)
	}
	if e.Response != nil {
		resp = bodyOf(e.Response.Tree)
	}
	switch s.api {
	case "FindCoordinator":
		return appendFindCoordinator(b, start, req, resp)
	case "DescribeGroups":
		if req != nil {
			var ids []string
			if a := child(req, "Groups"); a != nil {
				for _, c := range a.Children {
					if c.Kind == protocol.KindString && c.Flags&protocol.FlagNull == 0 {
						ids = append(ids, c.Str)
					}
				}
			}
			if len(ids) > 0 {
				b = appendWord(b, start, "groups=", "")
				b = appendList(b, ids)
			}
		}
	case "ListGroups":
		if a := child(resp, "Groups"); a != nil && a.Kind == protocol.KindArray && a.Flags&protocol.FlagNull == 0 {
			b = appendWord(b, start, "groups: ", strconv.Itoa(len(a.Children)))
		}
	case "JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup", "OffsetCommit", "OffsetFetch", "TxnOffsetCommit":
		b = appendGroupMember(b, start, s, req, resp)
	case "EndTxn":
		if v, ok := intChild(req, "Committed"); ok {
			word := "ABORT"
			if v != 0 {
				word = "COMMIT"
			}
			b = appendWord(b, start, word, "")
		}
	case "Fetch":
		if v, ok := intChild(req, "IsolationLevel"); ok {
			b = appendWord(b, start, isolationName(v), "")
		}
	case "SaslAuthenticate":
		// appendSASL writes what the dissector found; the token fills
		// in what it did not.
		mech, user := saslFromToken(req)
		if mech != "" && e.Mechanism == "" {
			b = appendWord(b, start, "mechanism=", mech)
		}
		if user != "" && e.User == "" {
			b = appendWord(b, start, "user=", user)
		}
	}
	return b
}

// isolationName names a Fetch or ListOffsets IsolationLevel
// (FetchRequest.json, KIP-98): 0 read_uncommitted, 1 read_committed.
func isolationName(v int64) string {
	if n := protocol.EnumName("FetchRequest", "IsolationLevel", v); n != "" {
		return n
	}
	return "isolation=" + strconv.FormatInt(v, 10)
}

// saslFromToken reads the mechanism family and user name from the parts
// the decoder found in a SaslAuthenticate request's AuthBytes
// (protocol.SASLToken): PLAIN has authzid/username/password, a SCRAM
// client-first message a gs2Header and a nonce.
func saslFromToken(req *protocol.Node) (mech, user string) {
	ab := child(req, "AuthBytes")
	if ab == nil {
		return "", ""
	}
	for _, p := range ab.Children {
		switch p.Name {
		case "authzid", "password":
			mech = "PLAIN"
		case "gs2Header", "nonce", "proof", "channelBinding":
			if mech == "" {
				mech = "SCRAM"
			}
		case "username":
			user = p.Str
			if user == "" && len(p.Raw) > 0 {
				user = string(p.Raw)
			}
		}
	}
	return mech, user
}

// appendFindCoordinator appends the key(s) asked, typed by KeyType, and
// the coordinator each maps to: "group=G → node 0 127.0.0.1:9092".
func appendFindCoordinator(b []byte, start int, req, resp *protocol.Node) []byte {
	kind := "group="
	if kt, ok := intChild(req, "KeyType"); ok {
		switch kt {
		case 1:
			kind = "txn="
		case 2:
			kind = "share="
		case 0:
		default:
			kind = "keytype" + strconv.FormatInt(kt, 10) + "="
		}
	}
	type coord struct {
		key  string
		node int64
		host string
		port int64
		ok   bool
	}
	var cs []coord
	if k, ok := strChild(req, "Key"); ok {
		cs = append(cs, coord{key: k})
	}
	if a := child(req, "CoordinatorKeys"); a != nil {
		for _, c := range a.Children {
			if c.Kind == protocol.KindString && c.Flags&protocol.FlagNull == 0 {
				cs = append(cs, coord{key: c.Str})
			}
		}
	}
	fill := func(c *coord, n *protocol.Node) {
		if ec, ok := intChild(n, "ErrorCode"); ok && ec != 0 {
			return
		}
		node, ok1 := intChild(n, "NodeId")
		host, ok2 := strChild(n, "Host")
		port, ok3 := intChild(n, "Port")
		if ok1 && ok2 && ok3 && node >= 0 {
			c.node, c.host, c.port, c.ok = node, host, port, true
		}
	}
	if resp != nil {
		if a := child(resp, "Coordinators"); a != nil {
			for _, el := range a.Children {
				k, _ := strChild(el, "Key")
				found := false
				for i := range cs {
					if cs[i].key == k && !cs[i].ok {
						fill(&cs[i], el)
						found = true
						break
					}
				}
				if !found && len(cs) == 0 { // orphan response
					c := coord{key: k}
					fill(&c, el)
					cs = append(cs, c)
				}
			}
		} else if len(cs) == 1 {
			fill(&cs[0], resp)
		}
	}
	for i, c := range cs {
		if i == maxSubjectList {
			b = append(b, " +"...)
			b = strconv.AppendInt(b, int64(len(cs)-i), 10)
			break
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = appendWord(b, start, kind, c.key)
		if c.ok {
			b = append(b, " → node "...)
			b = strconv.AppendInt(b, c.node, 10)
			b = append(b, ' ')
			b = append(b, c.host...)
			b = append(b, ':')
			b = strconv.AppendInt(b, c.port, 10)
		}
	}
	return b
}

// appendGroupMember appends the group (when the top level did not have
// it: OffsetFetch v8+ batches groups), the member ID (short) and the
// generation or member epoch for the group APIs.
func appendGroupMember(b []byte, start int, s *subject, req, resp *protocol.Node) []byte {
	scope := req
	if s.group == "" {
		// OffsetFetch v8+: Groups[]; LeaveGroup v3+: Members[] below.
		if a := child(req, "Groups"); a != nil && len(a.Children) > 0 && a.Children[0].Kind == protocol.KindStruct {
			var ids []string
			for _, el := range a.Children {
				if g, ok := strChild(el, "GroupId"); ok {
					ids = append(ids, g)
				}
			}
			if len(ids) > 0 {
				b = appendWord(b, start, "group=", "")
				b = appendList(b, ids)
				scope = a.Children[0]
			}
		}
	}
	member, _ := strChild(scope, "MemberId")
	if member == "" {
		if a := child(scope, "Members"); a != nil && len(a.Children) > 0 {
			member, _ = strChild(a.Children[0], "MemberId")
		}
	}
	if member == "" {
		member, _ = strChild(resp, "MemberId") // JoinGroup: assigned by the broker
	}
	if member != "" {
		b = appendWord(b, start, "member=", shortID(member))
	}
	gen, ok := intChild(resp, "GenerationId")
	if !ok || gen < 0 {
		gen, ok = intChild(scope, "GenerationId", "GenerationIdOrMemberEpoch", "MemberEpoch")
	}
	if ok && gen >= 0 {
		b = appendWord(b, start, "gen=", strconv.FormatInt(gen, 10))
	}
	return b
}

// maxErrorMessage is the longest ErrorMessage a line shows, in characters.
const maxErrorMessage = 60

// errorMessage returns the ErrorMessage beside the first ErrorCode field
// of e's response carrying code (a struct's ErrorCode and ErrorMessage
// pair, top-level or per element), cut to maxErrorMessage characters with
// "…"; "" when there is none or it is null or empty.
func errorMessage(e *dissect.Exchange, code int64) string {
	if e == nil || e.Response == nil || e.Response.Tree == nil || e.Response.Tree.Root == nil {
		return ""
	}
	m := findErrorMessage(e.Response.Tree.Root, code, 0)
	if r := []rune(m); len(r) > maxErrorMessage {
		m = string(r[:maxErrorMessage-1]) + "…"
	}
	return m
}

func findErrorMessage(n *protocol.Node, code int64, depth int) string {
	if depth > 64 || n.Kind == protocol.KindRecords {
		return ""
	}
	if ec, ok := intChild(n, "ErrorCode"); ok && ec == code {
		if m, ok := strChild(n, "ErrorMessage"); ok && m != "" {
			return m
		}
	}
	for _, c := range n.Children {
		if c.Kind == protocol.KindStruct || c.Kind == protocol.KindArray {
			if m := findErrorMessage(c, code, depth+1); m != "" {
				return m
			}
		}
	}
	return ""
}
