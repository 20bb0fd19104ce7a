package protocol

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// requestFrame frames body as a request of key at version ver: length
// prefix, request header (v1 or v2, client ID "kw"), body.
func requestFrame(key, ver int16, corr int32, body []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(requestPayload(key, ver, corr, body)))), requestPayload(key, ver, corr, body)...)
}

// requestPayload is a request header and body without length prefix.
func requestPayload(key, ver int16, corr int32, body []byte) []byte {
	var b []byte
	b = binary.BigEndian.AppendUint16(b, uint16(key))
	b = binary.BigEndian.AppendUint16(b, uint16(ver))
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	b = append(b, 0, 2, 'k', 'w')
	if RequestHeaderVersion(key, ver) >= 2 {
		b = append(b, 0) // no tagged fields
	}
	return append(b, body...)
}

// wantSpan checks n's name, space-0 span and (for leaves) value.
func wantSpan(t *testing.T, n *Node, what string, off, ln int) {
	t.Helper()
	if n == nil {
		t.Fatalf("%s: missing", what)
	}
	if n.Space != 0 || n.Off != off || n.Len != ln {
		t.Errorf("%s: span [%d,%d) space %d, want [%d,%d) space 0", what, n.Off, n.End(), n.Space, off, off+ln)
	}
}

func TestEmbeddedJoinGroupSubscription(t *testing.T) {
	rack := "r1"
	md := kmsg.ConsumerMemberMetadata{
		Version:  3,
		Topics:   []string{"a", "bb"},
		UserData: []byte{1, 2, 3},
		OwnedPartitions: []kmsg.ConsumerMemberMetadataOwnedPartition{
			{Topic: "a", Partitions: []int32{0, 2}},
		},
		Generation: 5,
		Rack:       &rack,
	}
	meta := md.AppendTo(nil)
	for _, ver := range []int16{5, 9} {
		req := kmsg.NewJoinGroupRequest()
		req.Version = ver
		req.Group = "g"
		req.ProtocolType = "consumer"
		req.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: meta}}
		frame := requestFrame(11, ver, 7, req.AppendTo(nil))
		tree := DecodeRequest(frame)
		if tree.Err != nil {
			t.Fatalf("v%d: %v", ver, tree.Err)
		}
		checkSpans(t, tree)
		_, _, body := FrameParts(tree.Root)
		n := find(body, "Protocols/[0]/Metadata")
		m := bytes.Index(frame, meta)
		if n == nil || m < 0 {
			t.Fatalf("v%d: Metadata node %v, bytes at %d", ver, n, m)
		}
		if n.Kind != KindBytes || n.Type != "ConsumerProtocolSubscription" || !bytes.Equal(n.Raw, meta) {
			t.Fatalf("v%d: Metadata kind %d type %q raw %x", ver, n.Kind, n.Type, n.Raw)
		}
		if n.End() != m+len(meta) {
			t.Errorf("v%d: Metadata ends at %d, want %d", ver, n.End(), m+len(meta))
		}
		// Layout of v3: version, topics, user data, owned partitions,
		// generation, rack (ConsumerProtocolSubscription.json).
		v := n.Child("Version")
		wantSpan(t, v, "Version", m, 2)
		if v.Int != 3 {
			t.Errorf("Version %d, want 3", v.Int)
		}
		topics := n.Child("Topics")
		wantSpan(t, topics, "Topics", m+2, 4+3+4)
		if len(topics.Children) != 2 || topics.Children[0].Str != "a" || topics.Children[1].Str != "bb" {
			t.Fatalf("Topics %v", topics.Children)
		}
		wantSpan(t, topics.Children[0], "Topics[0]", m+6, 3)
		wantSpan(t, topics.Children[1], "Topics[1]", m+9, 4)
		ud := n.Child("UserData")
		wantSpan(t, ud, "UserData", m+13, 7)
		if !bytes.Equal(ud.Raw, []byte{1, 2, 3}) {
			t.Errorf("UserData %x", ud.Raw)
		}
		owned := n.Child("OwnedPartitions")
		wantSpan(t, owned, "OwnedPartitions", m+20, 4+3+4+8)
		op := owned.Children[0]
		wantSpan(t, op.Child("Topic"), "OwnedPartitions[0].Topic", m+24, 3)
		if op.Child("Topic").Str != "a" {
			t.Errorf("owned topic %q", op.Child("Topic").Str)
		}
		parts := op.Child("Partitions")
		wantSpan(t, parts, "Partitions", m+27, 12)
		if len(parts.Children) != 2 || parts.Children[0].Int != 0 || parts.Children[1].Int != 2 {
			t.Fatalf("Partitions %v", parts.Children)
		}
		wantSpan(t, parts.Children[1], "Partitions[1]", m+35, 4)
		gen := n.Child("GenerationId")
		wantSpan(t, gen, "GenerationId", m+39, 4)
		if gen.Int != 5 {
			t.Errorf("GenerationId %d", gen.Int)
		}
		rk := n.Child("RackId")
		wantSpan(t, rk, "RackId", m+43, 4)
		if rk.Str != "r1" || rk.End() != m+len(meta) {
			t.Errorf("RackId %q ends at %d", rk.Str, rk.End())
		}

		// The JSON form keeps Kafka's base64 for the bytes field.
		js, err := json.Marshal(BodyJSON(body))
		if err != nil {
			t.Fatal(err)
		}
		if want := `"metadata":"` + base64.StdEncoding.EncodeToString(meta) + `"`; !bytes.Contains(js, []byte(want)) {
			t.Errorf("v%d: JSON %s lacks %s", ver, js, want)
		}
	}
}

func TestEmbeddedSyncGroupAssignment(t *testing.T) {
	asg := kmsg.ConsumerMemberAssignment{
		Version: 0,
		Topics:  []kmsg.ConsumerMemberAssignmentTopic{{Topic: "t", Partitions: []int32{4, 7}}},
	}
	ab := asg.AppendTo(nil)

	// v3 has no ProtocolType: decoded because the bytes fit exactly.
	req := kmsg.NewSyncGroupRequest()
	req.Version = 3
	req.Group, req.MemberID = "g", "m"
	req.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{
		{MemberID: "m", MemberAssignment: ab},
		{MemberID: "x", MemberAssignment: []byte("not an assignment")},
		{MemberID: "y"},
	}
	frame := requestFrame(14, 3, 1, req.AppendTo(nil))
	tree := DecodeRequest(frame)
	if tree.Err != nil {
		t.Fatal(tree.Err)
	}
	checkSpans(t, tree)
	_, _, body := FrameParts(tree.Root)
	n := find(body, "Assignments/[0]/Assignment")
	m := bytes.Index(frame, ab)
	if n.Type != "ConsumerProtocolAssignment" || n.Note != "ConsumerProtocolAssignment v0" {
		t.Fatalf("Assignment type %q note %q", n.Type, n.Note)
	}
	wantSpan(t, n.Child("Version"), "Version", m, 2)
	ap := n.Child("AssignedPartitions")
	wantSpan(t, ap, "AssignedPartitions", m+2, 4+3+4+8)
	tp := ap.Children[0]
	if tp.Child("Topic").Str != "t" {
		t.Errorf("topic %q", tp.Child("Topic").Str)
	}
	ps := tp.Child("Partitions").Children
	if len(ps) != 2 || ps[0].Int != 4 || ps[1].Int != 7 {
		t.Fatalf("partitions %v", ps)
	}
	wantSpan(t, ps[0], "Partitions[0]", m+13, 4)
	ud := n.Child("UserData")
	wantSpan(t, ud, "UserData", m+21, 4)
	if ud.Flags&FlagNull == 0 {
		t.Errorf("UserData not null")
	}
	// Bytes that do not decode stay raw without a note when the protocol
	// type is unknown; empty bytes stay empty.
	for _, i := range []string{"[1]", "[2]"} {
		o := find(body, "Assignments/"+i+"/Assignment")
		if !strings.HasSuffix(o.Type, "bytes") || len(o.Children) != 0 || o.Note != "" {
			t.Errorf("Assignments%s: type %q, %d children, note %q", i, o.Type, len(o.Children), o.Note)
		}
	}

	// v5 with protocol type "consumer": a failure is a note, not an error.
	req.Version = 5
	pt := "consumer"
	req.ProtocolType = &pt
	tree = DecodeRequest(requestFrame(14, 5, 1, req.AppendTo(nil)))
	if tree.Err != nil {
		t.Fatal(tree.Err)
	}
	checkSpans(t, tree)
	_, _, body = FrameParts(tree.Root)
	if n := find(body, "Assignments/[0]/Assignment"); n.Type != "ConsumerProtocolAssignment" {
		t.Errorf("v5 Assignment type %q", n.Type)
	}
	bad := find(body, "Assignments/[1]/Assignment")
	if len(bad.Children) != 0 || !strings.Contains(bad.Note, "ConsumerProtocolAssignment") {
		t.Errorf("bad assignment: %d children, note %q", len(bad.Children), bad.Note)
	}

	// Another protocol type leaves even a fitting assignment raw.
	pt = "connect"
	tree = DecodeRequest(requestFrame(14, 5, 1, req.AppendTo(nil)))
	_, _, body = FrameParts(tree.Root)
	if n := find(body, "Assignments/[0]/Assignment"); !strings.HasSuffix(n.Type, "bytes") || len(n.Children) != 0 {
		t.Errorf("connect assignment decoded: type %q", n.Type)
	}
}

func TestEmbeddedSyncGroupResponse(t *testing.T) {
	asg := kmsg.ConsumerMemberAssignment{Version: 1,
		Topics:   []kmsg.ConsumerMemberAssignmentTopic{{Topic: "tt", Partitions: []int32{9}}},
		UserData: []byte("u")}
	ab := asg.AppendTo(nil)
	resp := kmsg.NewSyncGroupResponse()
	resp.Version = 4
	resp.MemberAssignment = ab
	body := resp.AppendTo(nil)
	tree := DecodeBody(14, 4, true, body)
	if tree.Err != nil {
		t.Fatal(tree.Err)
	}
	checkSpans(t, tree)
	n := tree.Root.Child("Assignment")
	m := bytes.Index(body, ab)
	if n.Type != "ConsumerProtocolAssignment" {
		t.Fatalf("type %q note %q", n.Type, n.Note)
	}
	ud := n.Child("UserData")
	wantSpan(t, ud, "UserData", m+2+4+4+4+4, 5)
	if string(ud.Raw) != "u" {
		t.Errorf("UserData %q", ud.Raw)
	}
}

func TestEmbeddedEnvelope(t *testing.T) {
	md := kmsg.ConsumerMemberMetadata{Version: 0, Topics: []string{"inner"}}
	jg := kmsg.NewJoinGroupRequest()
	jg.Version = 6
	jg.Group, jg.ProtocolType = "g", "consumer"
	jg.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: md.AppendTo(nil)}}
	inner := requestPayload(11, 6, 42, jg.AppendTo(nil))
	pd := kmsg.DefaultPrincipalData{Version: 0, Type: "User", Name: "alice"}
	principal := pd.AppendTo(nil)

	env := kmsg.NewEnvelopeRequest()
	env.RequestData = inner
	env.RequestPrincipal = principal
	env.ClientHostAddress = []byte{127, 0, 0, 1}
	frame := requestFrame(58, 0, 3, env.AppendTo(nil))
	tree := DecodeRequest(frame)
	if tree.Err != nil {
		t.Fatal(tree.Err)
	}
	checkSpans(t, tree)
	_, _, body := FrameParts(tree.Root)

	rd := body.Child("RequestData")
	if rd.Kind != KindBytes || rd.Note != "JoinGroup v6" || len(rd.Children) != 2 {
		t.Fatalf("RequestData kind %d note %q, %d children", rd.Kind, rd.Note, len(rd.Children))
	}
	base := bytes.Index(frame, inner)
	hdr := rd.Children[0]
	if hdr.Name != "RequestHeader" || hdr.Child("CorrelationId").Int != 42 {
		t.Errorf("inner header %q corr %d", hdr.Name, hdr.Child("CorrelationId").Int)
	}
	wantSpan(t, hdr, "inner RequestHeader", base, 4+4+4+1)
	jb := rd.Children[1]
	if jb.Name != "JoinGroupRequest" || jb.End() != base+len(inner) {
		t.Errorf("inner body %q ends at %d, want %d", jb.Name, jb.End(), base+len(inner))
	}
	topics := find(jb, "Protocols/[0]/Metadata/Topics")
	if topics == nil || len(topics.Children) != 1 || topics.Children[0].Str != "inner" {
		t.Fatalf("inner subscription topics %v", topics)
	}

	rp := body.Child("RequestPrincipal")
	p := bytes.Index(frame, principal)
	if rp.Type != "DefaultPrincipalData" || rp.Child("Name").Str != "alice" || rp.Child("Type").Str != "User" {
		t.Fatalf("principal type %q note %q", rp.Type, rp.Note)
	}
	wantSpan(t, rp.Child("Version"), "principal Version", p, 2)
	wantSpan(t, rp.Child("Name"), "principal Name", p+2+5, 6)

	// A broken inner request leaves RequestData raw with a note.
	env.RequestData = []byte{0, 11, 0, 6, 0}
	tree = DecodeRequest(requestFrame(58, 0, 3, env.AppendTo(nil)))
	if tree.Err != nil {
		t.Fatal(tree.Err)
	}
	_, _, body = FrameParts(tree.Root)
	if rd := body.Child("RequestData"); len(rd.Children) != 0 || !strings.Contains(rd.Note, "not decoded") {
		t.Errorf("broken RequestData: %d children, note %q", len(rd.Children), rd.Note)
	}
}
