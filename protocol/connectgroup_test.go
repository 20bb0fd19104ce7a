package protocol

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kwire/kwire/internal/connecttest"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// connectAssign is a v1 assignment with a connector instance (task -1)
// and two tasks, a null revoked list and a scheduled delay.
var connectAssign = connecttest.Assignment{Version: 1, Leader: "connect-1-a1", LeaderURL: "http://w1:8083/",
	ConfigOffset: 42, Assigned: []connecttest.Connector{{Name: "pg-sink", Tasks: []int32{-1, 0, 3}}},
	NullRevoked: true, Delay: 30000}

// TestConnectJoinGroupMetadata: a Connect worker's JoinGroup protocol
// metadata at v0 ("default"), v1 ("compatible", null allocation) and v2
// ("sessioned", with an allocation) decodes as ConnectProtocolMetadata,
// the allocation as ConnectProtocolAssignment, with their spans; the
// JoinGroup response's members' too.
func TestConnectJoinGroupMetadata(t *testing.T) {
	alloc := connectAssign.Bytes()
	v0 := connecttest.Metadata(0, "http://w1:8083/", 17, nil)
	v1 := connecttest.Metadata(1, "http://w1:8083/", 18, nil)
	v2 := connecttest.Metadata(2, "http://w2:8083/", 19, alloc)
	req := kmsg.NewJoinGroupRequest()
	req.Version = 5
	req.Group, req.ProtocolType = "connect-cluster", "connect"
	req.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "sessioned", Metadata: v2}, {Name: "compatible", Metadata: v1}, {Name: "default", Metadata: v0}}
	frame := requestFrame(11, 5, 3, req.AppendTo(nil))
	tree := DecodeRequest(frame)
	if tree.Err != nil {
		t.Fatal(tree.Err)
	}
	checkSpans(t, tree)
	_, _, body := FrameParts(tree.Root)

	n := find(body, "Protocols/[2]/Metadata")
	if n.Type != "ConnectProtocolMetadata" || n.Note != "ConnectProtocolMetadata v0" {
		t.Fatalf("v0: type %q note %q", n.Type, n.Note)
	}
	m := bytes.Index(frame, v0)
	wantSpan(t, n.Child("Version"), "Version", m, 2)
	wantSpan(t, n.Child("Url"), "Url", m+2, 2+15)
	wantSpan(t, n.Child("ConfigOffset"), "ConfigOffset", m+19, 8)
	if n.Child("Url").Str != "http://w1:8083/" || n.Child("ConfigOffset").Int != 17 || n.Child("Allocation") != nil {
		t.Errorf("v0: Url %q ConfigOffset %d Allocation %v", n.Child("Url").Str, n.Child("ConfigOffset").Int, n.Child("Allocation"))
	}

	n = find(body, "Protocols/[1]/Metadata")
	if n.Type != "ConnectProtocolMetadata" || n.Ver != 1 || n.Child("ConfigOffset").Int != 18 {
		t.Fatalf("v1: type %q ver %d", n.Type, n.Ver)
	}
	if a := n.Child("Allocation"); a == nil || a.Flags&FlagNull == 0 || len(a.Children) != 0 {
		t.Errorf("v1: Allocation %+v, want null", a)
	}

	n = find(body, "Protocols/[0]/Metadata")
	m = bytes.Index(frame, v2)
	if n.Type != "ConnectProtocolMetadata" || n.Ver != 2 || n.Child("Url").Str != "http://w2:8083/" {
		t.Fatalf("v2: type %q ver %d", n.Type, n.Ver)
	}
	a := n.Child("Allocation")
	wantSpan(t, a, "Allocation", m+27, 4+len(alloc))
	if a.Type != "ConnectProtocolAssignment" || a.Ver != 1 {
		t.Fatalf("Allocation type %q ver %d note %q", a.Type, a.Ver, a.Note)
	}
	checkConnectAssign(t, a, m+31)

	// The response lists the members' metadata (v7 states ProtocolType).
	resp := kmsg.NewJoinGroupResponse()
	resp.Version = 7
	pt, pn := "connect", "sessioned"
	resp.ProtocolType, resp.Protocol = &pt, &pn
	resp.LeaderID, resp.MemberID = "connect-1-a1", "connect-1-a1"
	resp.Members = []kmsg.JoinGroupResponseMember{{MemberID: "connect-1-a1", ProtocolMetadata: v2}}
	rb := resp.AppendTo(nil)
	rt := DecodeBody(11, 7, true, rb)
	if rt.Err != nil {
		t.Fatal(rt.Err)
	}
	checkSpans(t, rt)
	n = find(rt.Root, "Members/[0]/Metadata")
	if n.Type != "ConnectProtocolMetadata" || find(n, "Allocation/Assignment/[0]/Connector").Str != "pg-sink" {
		t.Errorf("response member: type %q", n.Type)
	}
	// Without a protocol type (v6), Connect metadata is decoded when it
	// decodes completely (after the consumer's struct did not).
	resp.Version = 6
	rt = DecodeBody(11, 6, true, resp.AppendTo(nil))
	if n := find(rt.Root, "Members/[0]/Metadata"); n.Type != "ConnectProtocolMetadata" || find(n, "Allocation/Assignment/[0]/Connector").Str != "pg-sink" {
		t.Errorf("v6 response: type %q, %d children, note %q", n.Type, len(n.Children), n.Note)
	}
	// Bytes that are neither stay raw, without a note.
	resp.Members[0].ProtocolMetadata = []byte{0, 1, 0xff, 0xff, 0xff}
	rt = DecodeBody(11, 6, true, resp.AppendTo(nil))
	if n := find(rt.Root, "Members/[0]/Metadata"); len(n.Children) != 0 || n.Note != "" {
		t.Errorf("v6 response, other bytes: %d children, note %q", len(n.Children), n.Note)
	}
}

// TestConnectUnstatedTypeUserinfoWithheld: a JoinGroup response before v7
// and a SyncGroup response before v5 do not state the protocol type; a
// Connect worker's URL holding a userinfo there was shown in the raw
// bytes. Now the bytes decode as Connect's structs when they decode
// completely, and the URL is withheld.
func TestConnectUnstatedTypeUserinfoWithheld(t *testing.T) {
	const pw = "Zq-UNSTATED-PW-41"
	asg := connectAssign
	asg.LeaderURL = "http://admin:" + pw + "@w1:8083/"
	meta := connecttest.Metadata(1, "http://svc:"+pw+"@w2:8083/", 5, nil)
	jr := kmsg.NewJoinGroupResponse()
	jr.Version = 5
	jr.LeaderID, jr.MemberID = "connect-1-a1", "connect-1-a1"
	jr.Members = []kmsg.JoinGroupResponseMember{{MemberID: "connect-1-a1", ProtocolMetadata: meta}}
	sr := kmsg.NewSyncGroupResponse()
	sr.Version = 3
	sr.MemberAssignment = asg.Bytes()
	for _, c := range []struct {
		key  int16
		ver  int16
		body []byte
		path string
		typ  string
	}{{11, 5, jr.AppendTo(nil), "Members/[0]/Metadata", "ConnectProtocolMetadata"}, {14, 3, sr.AppendTo(nil), "Assignment", "ConnectProtocolAssignment"}} {
		tree := DecodeBody(c.key, c.ver, true, c.body)
		if tree.Err != nil {
			t.Fatal(tree.Err)
		}
		n := find(tree.Root, c.path)
		if n.Type != c.typ || n.Flags&FlagRedacted == 0 {
			t.Errorf("%s v%d: type %q flags %v", APIName(c.key), c.ver, n.Type, n.Flags)
		}
		js, err := json.Marshal(BodyJSON(tree.Root))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(js, []byte(pw)) {
			t.Errorf("%s v%d JSON shows the password: %s", APIName(c.key), c.ver, js)
		}
	}
}

// checkConnectAssign checks a decoded connectAssign whose version starts
// at off.
func checkConnectAssign(t *testing.T, a *Node, off int) {
	t.Helper()
	wantSpan(t, a.Child("Version"), "Version", off, 2)
	wantSpan(t, a.Child("Error"), "Error", off+2, 2)
	wantSpan(t, a.Child("Leader"), "Leader", off+4, 2+12)
	wantSpan(t, a.Child("LeaderUrl"), "LeaderUrl", off+18, 2+15)
	wantSpan(t, a.Child("ConfigOffset"), "ConfigOffset", off+35, 8)
	if a.Child("Error").Int != 0 || a.Child("Leader").Str != "connect-1-a1" || a.Child("LeaderUrl").Str != "http://w1:8083/" || a.Child("ConfigOffset").Int != 42 {
		t.Errorf("assignment header: %q %q %d", a.Child("Leader").Str, a.Child("LeaderUrl").Str, a.Child("ConfigOffset").Int)
	}
	asg := a.Child("Assignment")
	wantSpan(t, asg, "Assignment", off+43, 4+2+7+4+12)
	if len(asg.Children) != 1 || asg.Children[0].Child("Connector").Str != "pg-sink" {
		t.Fatalf("Assignment %v", asg.Children)
	}
	tasks := asg.Children[0].Child("Tasks").Children
	if len(tasks) != 3 || tasks[0].Int != -1 || tasks[1].Int != 0 || tasks[2].Int != 3 {
		t.Errorf("Tasks %v", tasks)
	}
	rev := a.Child("Revoked")
	wantSpan(t, rev, "Revoked", off+72, 4)
	if rev.Flags&FlagNull == 0 {
		t.Errorf("Revoked not null")
	}
	d := a.Child("Delay")
	wantSpan(t, d, "Delay", off+76, 4)
	if d.Int != 30000 {
		t.Errorf("Delay %d", d.Int)
	}
}

// TestConnectSyncGroupAssignment: the leader's SyncGroup plan at v0 (an
// error CONFIG_MISMATCH), v1 (null revoked, a connector task -1) and v2
// (revoked connectors, null assignment), the response's assignment, and
// bytes that do not decode: a note, the bytes withheld (they may hold a
// URL's userinfo), the message decoded.
func TestConnectSyncGroupAssignment(t *testing.T) {
	v0 := connecttest.Assignment{Version: 0, Error: 1, Leader: "l", LeaderURL: "http://l:8083/", ConfigOffset: 7,
		Assigned: []connecttest.Connector{{Name: "c", Tasks: []int32{}}}}.Bytes()
	v1 := connectAssign.Bytes()
	v2 := connecttest.Assignment{Version: 2, Leader: "l", LeaderURL: "http://l:8083/", ConfigOffset: 9, NullAssigned: true,
		Revoked: []connecttest.Connector{{Name: "pg-sink", Tasks: []int32{-1, 1}}}, Delay: 0}.Bytes()
	bad := append([]byte(nil), v1[:len(v1)-3]...) // cut inside Delay

	req := kmsg.NewSyncGroupRequest()
	req.Version = 5
	pt, pn := "connect", "sessioned"
	req.ProtocolType, req.Protocol = &pt, &pn
	req.Group, req.MemberID = "connect-cluster", "l"
	req.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{
		{MemberID: "a", MemberAssignment: v0}, {MemberID: "b", MemberAssignment: v1},
		{MemberID: "c", MemberAssignment: v2}, {MemberID: "d", MemberAssignment: bad},
	}
	frame := requestFrame(14, 5, 4, req.AppendTo(nil))
	tree := DecodeRequest(frame)
	if tree.Err != nil {
		t.Fatal(tree.Err)
	}
	checkSpans(t, tree)
	_, _, body := FrameParts(tree.Root)

	n := find(body, "Assignments/[0]/Assignment")
	if n.Type != "ConnectProtocolAssignment" || n.Ver != 0 || n.Child("Error").Int != 1 || n.Child("Revoked") != nil || n.Child("Delay") != nil {
		t.Fatalf("v0: type %q ver %d", n.Type, n.Ver)
	}
	if c := find(n, "Assignment/[0]"); c.Child("Connector").Str != "c" || len(c.Child("Tasks").Children) != 0 {
		t.Errorf("v0 connector %q", c.Child("Connector").Str)
	}
	if got := ValueName(n.Child("Error").Field, n.Child("Error").Int); got != "CONFIG_MISMATCH" {
		t.Errorf("v0 Error named %q, want CONFIG_MISMATCH", got)
	}
	n = find(body, "Assignments/[1]/Assignment")
	checkConnectAssign(t, n, bytes.Index(frame, v1))
	n = find(body, "Assignments/[2]/Assignment")
	if n.Type != "ConnectProtocolAssignment" || n.Ver != 2 || n.Child("Assignment").Flags&FlagNull == 0 {
		t.Fatalf("v2: type %q ver %d", n.Type, n.Ver)
	}
	if r := find(n, "Revoked/[0]"); r.Child("Connector").Str != "pg-sink" || len(r.Child("Tasks").Children) != 2 || r.Child("Tasks").Children[0].Int != -1 {
		t.Errorf("v2 revoked %v", r)
	}
	n = find(body, "Assignments/[3]/Assignment")
	if len(n.Children) != 0 || !strings.Contains(n.Note, "ConnectProtocolAssignment v1 not decoded") || n.Flags&FlagRedacted == 0 || n.Raw != nil {
		t.Errorf("bad bytes: %d children, note %q, flags %v, raw %x", len(n.Children), n.Note, n.Flags, n.Raw)
	}
	// --show-secrets shows them.
	st := (&Decoder{ShowSecrets: true}).DecodeRequest(frame)
	_, _, sb := FrameParts(st.Root)
	if n := find(sb, "Assignments/[3]/Assignment"); !bytes.Equal(n.Raw, bad) || n.Flags&FlagRedacted != 0 {
		t.Errorf("bad bytes with --show-secrets: raw %x", n.Raw)
	}

	resp := kmsg.NewSyncGroupResponse()
	resp.Version = 5
	resp.ProtocolType, resp.Protocol = &pt, &pn
	resp.MemberAssignment = v1
	rb := resp.AppendTo(nil)
	rt := DecodeBody(14, 5, true, rb)
	if rt.Err != nil {
		t.Fatal(rt.Err)
	}
	checkSpans(t, rt)
	checkConnectAssign(t, rt.Root.Child("Assignment"), bytes.Index(rb, v1))
	// SyncGroup v4 states no protocol type: the bytes decode as Connect's
	// as they decode completely as no consumer assignment.
	resp.Version = 4
	rb = resp.AppendTo(nil)
	rt = DecodeBody(14, 4, true, rb)
	checkSpans(t, rt)
	checkConnectAssign(t, rt.Root.Child("Assignment"), bytes.Index(rb, v1))
}

// TestConnectDescribeGroups: a described group of protocol type
// "connect" has its members' metadata and assignments decoded, a
// "consumer" group beside it its own structs, and a member whose metadata
// is too short has a note and its bytes withheld.
func TestConnectDescribeGroups(t *testing.T) {
	meta := connecttest.Metadata(1, "http://w1:8083/", 5, connectAssign.Bytes())
	resp := kmsg.NewDescribeGroupsResponse()
	resp.Version = 5
	cg := kmsg.NewDescribeGroupsResponseGroup()
	cg.Group, cg.State, cg.ProtocolType, cg.Protocol = "connect-cluster", "Stable", "connect", "compatible"
	cg.Members = []kmsg.DescribeGroupsResponseGroupMember{
		{MemberID: "connect-1-a1", ClientID: "connect-1", ClientHost: "/10.0.0.1", ProtocolMetadata: meta, MemberAssignment: connectAssign.Bytes()},
		{MemberID: "connect-2-b2", ClientID: "connect-2", ClientHost: "/10.0.0.2", ProtocolMetadata: []byte{0}, MemberAssignment: []byte{0, 9, 0}},
	}
	sub := kmsg.ConsumerMemberMetadata{Version: 0, Topics: []string{"t"}}
	og := kmsg.NewDescribeGroupsResponseGroup()
	og.Group, og.State, og.ProtocolType, og.Protocol = "app", "Stable", "consumer", "range"
	og.Members = []kmsg.DescribeGroupsResponseGroupMember{{MemberID: "m", ClientID: "c", ClientHost: "/h", ProtocolMetadata: sub.AppendTo(nil)}}
	resp.Groups = []kmsg.DescribeGroupsResponseGroup{cg, og}
	rb := resp.AppendTo(nil)
	rt := DecodeBody(15, 5, true, rb)
	if rt.Err != nil {
		t.Fatal(rt.Err)
	}
	checkSpans(t, rt)
	n := find(rt.Root, "Groups/[0]/Members/[0]/MemberMetadata")
	if n.Type != "ConnectProtocolMetadata" || n.Child("Url").Str != "http://w1:8083/" {
		t.Fatalf("metadata type %q", n.Type)
	}
	if a := n.Child("Allocation"); a.Type != "ConnectProtocolAssignment" {
		t.Errorf("allocation type %q note %q", a.Type, a.Note)
	}
	a := find(rt.Root, "Groups/[0]/Members/[0]/MemberAssignment")
	checkConnectAssign(t, a, bytes.LastIndex(rb, connectAssign.Bytes()))
	short := find(rt.Root, "Groups/[0]/Members/[1]/MemberMetadata")
	if short.Note != "not a ConnectProtocolMetadata: 1 byte, want a 2-byte version first; withheld: the bytes of a ConnectProtocolMetadata may hold a credential (a URL's userinfo)" {
		t.Errorf("short metadata note %q", short.Note)
	}
	unk := find(rt.Root, "Groups/[0]/Members/[1]/MemberAssignment")
	if !strings.HasPrefix(unk.Note, "ConnectProtocolAssignment version 9 is not in the schema table") || unk.Flags&FlagRedacted == 0 {
		t.Errorf("v9 assignment note %q", unk.Note)
	}
	if n := find(rt.Root, "Groups/[1]/Members/[0]/MemberMetadata"); n.Type != "ConsumerProtocolSubscription" {
		t.Errorf("consumer group member type %q", n.Type)
	}
}

// TestConnectURLUserinfoWithheld: a worker URL or leader URL holding a
// userinfo is withheld, in the tree, the JSON form and the raw base64 of
// the bytes holding it (nested in an allocation too); with --show-secrets
// it shows.
func TestConnectURLUserinfoWithheld(t *testing.T) {
	const pw = "Zq-CONNECT-URL-PW-93"
	asg := connectAssign
	asg.LeaderURL = "http://admin:" + pw + "@w1:8083/"
	meta := connecttest.Metadata(2, "https://svc:"+pw+"@w2:8443/", 5, asg.Bytes())
	req := kmsg.NewJoinGroupRequest()
	req.Version = 5
	req.Group, req.ProtocolType = "connect-cluster", "connect"
	req.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "sessioned", Metadata: meta}}
	frame := requestFrame(11, 5, 3, req.AppendTo(nil))
	for _, show := range []bool{false, true} {
		tree := (&Decoder{ShowSecrets: show}).DecodeRequest(frame)
		if tree.Err != nil {
			t.Fatal(tree.Err)
		}
		_, _, body := FrameParts(tree.Root)
		n := find(body, "Protocols/[0]/Metadata")
		url, lurl := n.Child("Url"), find(n, "Allocation/LeaderUrl")
		js, err := json.Marshal(BodyJSON(body))
		if err != nil {
			t.Fatal(err)
		}
		if show {
			if url.Str != "https://svc:"+pw+"@w2:8443/" || lurl.Str != asg.LeaderURL || n.Flags&FlagRedacted != 0 {
				t.Errorf("--show-secrets: %q %q", url.Str, lurl.Str)
			}
			if !bytes.Contains(js, []byte(base64.StdEncoding.EncodeToString(meta))) {
				t.Errorf("--show-secrets JSON lacks the metadata's base64")
			}
			continue
		}
		if url.Flags&FlagRedacted == 0 || url.Str != "" || !strings.Contains(url.Note, "userinfo") {
			t.Errorf("Url %q flags %v note %q", url.Str, url.Flags, url.Note)
		}
		if lurl.Flags&FlagRedacted == 0 || lurl.Str != "" {
			t.Errorf("LeaderUrl %q", lurl.Str)
		}
		if n.Flags&FlagRedacted == 0 || n.Child("Allocation").Flags&FlagRedacted == 0 {
			t.Errorf("the bytes holding the URLs are not marked")
		}
		// Other values stay.
		if n.Child("ConfigOffset").Int != 5 || find(n, "Allocation/Leader").Str != "connect-1-a1" {
			t.Errorf("values beside the URLs lost")
		}
		if bytes.Contains(js, []byte(pw)) {
			t.Errorf("JSON shows the password: %s", js)
		}
		var v struct {
			Protocols []struct{ Metadata string } `json:"protocols"`
		}
		if err := json.Unmarshal(js, &v); err != nil || len(v.Protocols) != 1 {
			t.Fatalf("JSON %s: %v", js, err)
		}
		raw, err := base64.StdEncoding.DecodeString(v.Protocols[0].Metadata)
		if err != nil || bytes.Contains(raw, []byte(pw)) || !bytes.Contains(raw, []byte(redactedMark)) {
			t.Errorf("JSON metadata bytes %q", raw)
		}
	}
	// A URL without '@' shows.
	plain := connecttest.Metadata(0, "http://w3:8083/", 1, nil)
	req.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "default", Metadata: plain}}
	tree := DecodeRequest(requestFrame(11, 5, 3, req.AppendTo(nil)))
	_, _, body := FrameParts(tree.Root)
	if n := find(body, "Protocols/[0]/Metadata"); n.Child("Url").Str != "http://w3:8083/" || n.Flags&FlagRedacted != 0 {
		t.Errorf("plain Url %q", n.Child("Url").Str)
	}
}

// TestConnectLikeBytesWithheld: where the group's protocol type is not
// stated (JoinGroup response v5, SyncGroup v3) or is another type (""),
// a Connect worker's metadata or assignment that does not decode
// completely (a version kwire's schemas lack, trailing bytes, cut short)
// stayed raw and showed the URL's userinfo in -x, -V and the JSON
// base64. Now bytes that begin as a Connect struct whose URL holds a
// userinfo are withheld; other raw bytes stay.
func TestConnectLikeBytesWithheld(t *testing.T) {
	const pw = "Zq-RAW-CONNECT-PW-7"
	asg := connectAssign
	asg.LeaderURL = "http://admin:" + pw + "@w1:8083/"
	v3 := connecttest.Metadata(1, "http://svc:"+pw+"@w2:8083/", 5, nil)
	v3[1] = 3 // a future version
	trailing := append(asg.Bytes(), 0, 0)
	cut := connecttest.Metadata(0, "http://svc:"+pw+"@w2:8083/", 5, nil)[:24] // cut inside the password
	plain := append(connecttest.Metadata(0, "http://w3:8083/", 5, nil), 0)
	for _, c := range []struct {
		name     string
		key, ver int16
		body     func(b []byte) []byte
		path     string
	}{
		{"JoinGroupResponse v5", 11, 5, func(b []byte) []byte {
			r := kmsg.NewJoinGroupResponse()
			r.Version = 5
			r.Members = []kmsg.JoinGroupResponseMember{{MemberID: "m", ProtocolMetadata: b}}
			return r.AppendTo(nil)
		}, "Members/[0]/Metadata"},
		{"SyncGroupResponse v3", 14, 3, func(b []byte) []byte {
			r := kmsg.NewSyncGroupResponse()
			r.Version = 3
			r.MemberAssignment = b
			return r.AppendTo(nil)
		}, "Assignment"},
		{"DescribeGroupsResponse v5 type \"\"", 15, 5, func(b []byte) []byte {
			r := kmsg.NewDescribeGroupsResponse()
			r.Version = 5
			r.Groups = []kmsg.DescribeGroupsResponseGroup{{Group: "g", Members: []kmsg.DescribeGroupsResponseGroupMember{{MemberID: "m", ProtocolMetadata: b, MemberAssignment: b}}}}
			return r.AppendTo(nil)
		}, "Groups/[0]/Members/[0]/MemberMetadata"},
	} {
		for _, b := range [][]byte{v3, trailing, cut} {
			tree := DecodeBody(c.key, c.ver, true, c.body(b))
			if tree.Err != nil {
				t.Fatal(c.name, tree.Err)
			}
			n := find(tree.Root, c.path)
			if n.Flags&FlagRedacted == 0 || n.Raw != nil || !strings.Contains(n.Note, "Kafka Connect") {
				t.Errorf("%s %x: flags %v note %q", c.name, b[:2], n.Flags, n.Note)
			}
			js, _ := json.Marshal(BodyJSON(tree.Root))
			if bytes.Contains(js, []byte(pw[:8])) || bytes.Contains(js, []byte(base64.StdEncoding.EncodeToString([]byte(pw))[:8])) {
				t.Errorf("%s: JSON shows the password: %s", c.name, js)
			}
			shown := (&Decoder{ShowSecrets: true}).DecodeBody(c.key, c.ver, true, c.body(b))
			if n := find(shown.Root, c.path); !bytes.Equal(n.Raw, b) {
				t.Errorf("%s --show-secrets: raw %q", c.name, n.Raw)
			}
		}
		// Bytes without a secret in a URL stay raw.
		tree := DecodeBody(c.key, c.ver, true, c.body(plain))
		if n := find(tree.Root, c.path); n.Flags&FlagRedacted != 0 || !bytes.Equal(n.Raw, plain) {
			t.Errorf("%s plain: flags %v raw %q", c.name, n.Flags, n.Raw)
		}
	}
}

// TestConnectURLSecretParameter: a worker URL whose query holds a
// parameter named like a secret is withheld as a userinfo is; the groups
// view showed 'url http://h:8083/?access_token=T'.
func TestConnectURLSecretParameter(t *testing.T) {
	const tok = "Zq-QUERY-TOKEN-5"
	req := kmsg.NewJoinGroupRequest()
	req.Version = 5
	req.Group, req.ProtocolType = "connect-cluster", "connect"
	req.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "default", Metadata: connecttest.Metadata(0, "http://w:8083/?access_token="+tok, 1, nil)}}
	tree := DecodeRequest(requestFrame(11, 5, 3, req.AppendTo(nil)))
	_, _, body := FrameParts(tree.Root)
	n := find(body, "Protocols/[0]/Metadata")
	if u := n.Child("Url"); u.Str != "" || u.Flags&FlagRedacted == 0 || n.Flags&FlagRedacted == 0 || n.Child("ConfigOffset").Int != 1 {
		t.Errorf("Url %q flags %v; metadata flags %v", u.Str, u.Flags, n.Flags)
	}
}
