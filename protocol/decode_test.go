package protocol

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// checkSpans asserts the tree invariants: the root covers the input of
// space 0, every child lies inside its parent when both are in the same
// space, and siblings in one space are ordered and do not overlap.
func checkSpans(t testing.TB, tree *Tree) {
	t.Helper()
	if msg := spanProblem(tree); msg != "" {
		t.Fatal(msg)
	}
}

func spanProblem(tree *Tree) string {
	if tree.Root == nil {
		return "nil root"
	}
	if n := len(tree.Spaces[0].Data); tree.Root.Off != 0 || tree.Root.Len != n {
		return fmt.Sprintf("root spans [%d,%d), input is %d bytes", tree.Root.Off, tree.Root.End(), n)
	}
	var walk func(n *Node, path string) string
	walk = func(n *Node, path string) string {
		if n.Len < 0 || n.Off < 0 || n.Space >= len(tree.Spaces) || n.End() > len(tree.Spaces[n.Space].Data) {
			return fmt.Sprintf("%s: span [%d,%d) in space %d is out of range", path, n.Off, n.End(), n.Space)
		}
		prevEnd := -1
		for _, c := range n.Children {
			cp := path + "/" + c.Name
			if c.Space == n.Space {
				if c.Off < n.Off || c.End() > n.End() {
					return fmt.Sprintf("%s: [%d,%d) outside parent [%d,%d)", cp, c.Off, c.End(), n.Off, n.End())
				}
				if c.Off < prevEnd {
					return fmt.Sprintf("%s: starts at %d before its previous sibling ends at %d", cp, c.Off, prevEnd)
				}
				prevEnd = c.End()
			}
			if msg := walk(c, cp); msg != "" {
				return msg
			}
		}
		return ""
	}
	return walk(tree.Root, tree.Root.Name)
}

// countNodes returns the number of nodes in the tree.
func countNodes(n *Node) int {
	c := 1
	for _, k := range n.Children {
		c += countNodes(k)
	}
	return c
}

// find follows a path of child names ("RequestHeader/ClientId").
func find(n *Node, path string) *Node {
	for _, name := range strings.Split(path, "/") {
		n = n.Child(name)
	}
	return n
}

func TestApiVersionsRequestFrames(t *testing.T) {
	cases := []struct {
		name     string
		frame    string
		version  int16
		hv       int16
		corr     int64
		clientID string
		body     map[string]string // child name -> string value
		hdrLen   int
	}{
		{
			name: "v0, header v1, 23 bytes",
			// length 19 | key 18 | version 0 | correlation 0x01020304 | client id len 9 "wire-read"
			frame:   "00000013 0012 0000 01020304 0009" + hexOf("wire-read"),
			version: 0, hv: 1, corr: 0x01020304, clientID: "wire-read", hdrLen: 19,
		},
		{
			name: "v2, header v1, 17 bytes",
			// length 13 | key 18 | version 2 | correlation 1 | client id "u03"
			frame:   "0000000d 0012 0002 00000001 0003 753033",
			version: 2, hv: 1, corr: 1, clientID: "u03", hdrLen: 13,
		},
		{
			name: "v3, header v2, 31 bytes",
			// length 27 | key 18 | version 3 | correlation 2 | client id INT16 "u03" | no tags
			// body: compact "u03-app" | compact "1.0" | no tags
			frame:   "0000001b 0012 0003 00000002 0003 753033 00  08 7530332d617070 04 312e30 00",
			version: 3, hv: 2, corr: 2, clientID: "u03", hdrLen: 14,
			body: map[string]string{"ClientSoftwareName": "u03-app", "ClientSoftwareVersion": "1.0"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			frame := unhex(t, c.frame)
			tree := DecodeRequest(frame)
			if tree.Err != nil {
				t.Fatalf("err: %v", tree.Err)
			}
			checkSpans(t, tree)
			length, hdr, body := FrameParts(tree.Root)
			if length == nil || length.Int != int64(len(frame)-4) {
				t.Fatalf("length node %+v, want %d", length, len(frame)-4)
			}
			if hdr.Name != "RequestHeader" || hdr.Note != versionNote(c.hv) {
				t.Errorf("header %s %s, want RequestHeader v%d", hdr.Name, hdr.Note, c.hv)
			}
			if got := hdr.Child("CorrelationId").Int; got != c.corr {
				t.Errorf("correlation id %#x, want %#x", got, c.corr)
			}
			if got := hdr.Child("ClientId"); got.Str != c.clientID || got.Type != "nullable_string" {
				t.Errorf("client id %q (%s), want %q as a classic nullable_string", got.Str, got.Type, c.clientID)
			}
			if body.Name != "ApiVersionsRequest" || body.Note != versionNote(c.version) {
				t.Errorf("body %s %s", body.Name, body.Note)
			}
			if body.Off != 4+c.hdrLen || body.End() != len(frame) {
				t.Errorf("body spans [%d,%d), want [%d,%d)", body.Off, body.End(), 4+c.hdrLen, len(frame))
			}
			for name, want := range c.body {
				if got := body.Child(name); got == nil || got.Str != want {
					t.Errorf("%s = %+v, want %q", name, got, want)
				}
			}
			h, err := ParseRequestHeader(frame[4:])
			if err != nil {
				t.Fatal(err)
			}
			if h.APIKey != 18 || h.APIVersion != c.version || int64(h.CorrelationID) != c.corr ||
				h.ClientID != c.clientID || h.HeaderVersion != c.hv || h.Len != c.hdrLen {
				t.Errorf("ParseRequestHeader = %+v", h)
			}
			if tree.Root.Note != "ApiVersions "+versionNote(c.version) {
				t.Errorf("root note %q", tree.Root.Note)
			}
		})
	}
}

func hexOf(s string) string { return fmt.Sprintf("%x", s) }

func TestUnknownTagV4(t *testing.T) {
	// ApiVersions v4 body: compact "u03-app" | compact "1.0" |
	// 1 tagged field: tag 99, size 5, "hello".
	body := unhex(t, "08 7530332d617070 04 312e30 01 63 05 68656c6c6f")
	// Withheld by default, as every span not decoded is; shown with
	// --show-secrets.
	if u := DecodeBody(18, 4, false, body).Root.Child(nameTagged).Children[0]; u.Raw != nil || u.Flags&FlagRedacted == 0 ||
		u.Note != "unknown tag 99; withheld: bytes not decoded may hold credentials" {
		t.Errorf("unknown tag by default: %+v", u)
	}
	show := Decoder{ShowSecrets: true}
	tree := show.DecodeBody(18, 4, false, body)
	if tree.Err != nil {
		t.Fatal(tree.Err)
	}
	checkSpans(t, tree)
	tags := tree.Root.Child(nameTagged)
	if tags == nil || tags.Int != 1 || len(tags.Children) != 1 {
		t.Fatalf("tagged fields node %+v", tags)
	}
	u := tags.Children[0]
	if u.Kind != KindUnknownTag || u.Int != 99 || string(u.Raw) != "hello" || u.Flags&FlagUnknown == 0 || u.Name != "UNKNOWN(99)" {
		t.Errorf("unknown tag node %+v", u)
	}
	if u.Off != 13 || u.Len != 7 {
		t.Errorf("unknown tag spans [%d,%d), want [13,20)", u.Off, u.End())
	}
	got := UnknownTaggedFields(tree.Root)
	if len(got) != 1 || got[0].Tag != 99 || string(got[0].Data) != "hello" {
		t.Errorf("UnknownTaggedFields = %+v", got)
	}
	// In a whole frame, with header v2.
	frame := append(unhex(t, "00000000 0012 0004 00000003 0003 753033 00"), body...)
	binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
	ft := DecodeRequest(frame)
	if ft.Err != nil {
		t.Fatal(ft.Err)
	}
	checkSpans(t, ft)
	_, _, b := FrameParts(ft.Root)
	if u := UnknownTaggedFields(b); len(u) != 1 || u[0].Tag != 99 {
		t.Errorf("frame: unknown tags %+v", u)
	}
}

func TestKnownTaggedField(t *testing.T) {
	// ApiVersions v3 response: error 0 | 1 api key (18, 0, 4, no tags) |
	// throttle 0 | 2 tagged fields: 0 SupportedFeatures [] and 1
	// FinalizedFeaturesEpoch 7.
	body := unhex(t, "0000 02 0012 0000 0004 00 00000000 02 00 01 01 01 08 0000000000000007")
	tree := DecodeBody(18, 3, true, body)
	if tree.Err != nil {
		t.Fatal(tree.Err)
	}
	checkSpans(t, tree)
	tags := tree.Root.Child(nameTagged)
	epoch := tags.Child("FinalizedFeaturesEpoch")
	if epoch == nil || epoch.Int != 7 || epoch.Flags&FlagTagged == 0 {
		t.Fatalf("FinalizedFeaturesEpoch %+v", epoch)
	}
	if epoch.Off != 18 || epoch.Len != 10 {
		t.Errorf("tagged epoch spans [%d,%d), want [18,28) (tag, size and data)", epoch.Off, epoch.End())
	}
	if ec := tree.Root.Child("ErrorCode"); ec.Note != "NONE" {
		t.Errorf("error code note %q, want NONE", ec.Note)
	}
	js, _ := json.Marshal(BodyJSON(tree.Root))
	for _, want := range []string{`"finalizedFeaturesEpoch":7`, `"supportedFeatures":[]`, `"finalizedFeatures":[]`, `"zkMigrationReady":false`} {
		if !strings.Contains(string(js), want) {
			t.Errorf("JSON %s lacks %s", js, want)
		}
	}
}

// apiVersionsResponse builds an ApiVersions response frame with n api keys
// in the given version's encoding.
func apiVersionsResponse(corr int32, version int16, n int) []byte {
	flex := version >= 3
	b := binary.BigEndian.AppendUint32(nil, 0) // length, patched below
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	b = append(b, 0, 0) // error code
	if flex {
		b = append(b, byte(n+1)) // n < 127
	} else {
		b = binary.BigEndian.AppendUint32(b, uint32(n))
	}
	for i := 0; i < n; i++ {
		b = binary.BigEndian.AppendUint16(b, uint16(i))
		b = binary.BigEndian.AppendUint16(b, 0)
		b = binary.BigEndian.AppendUint16(b, uint16(i%13))
		if flex {
			b = append(b, 0)
		}
	}
	if version >= 1 {
		b = binary.BigEndian.AppendUint32(b, 0) // throttle
	}
	if flex {
		b = append(b, 0)
	}
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

func TestApiVersionsResponses(t *testing.T) {
	for _, c := range []struct {
		version int16
		prefix  string
	}{
		{2, "00000001 0000 0000004d"}, // 4-byte array length
		{4, "00000002 0000 4e"},       // varint array length, no header tag byte (KIP-511)
	} {
		frame := apiVersionsResponse(int32(c.version/2), c.version, 77)
		if got := fmt.Sprintf("%x", frame[4:4+len(unhex(t, c.prefix))]); got != fmt.Sprintf("%x", unhex(t, c.prefix)) {
			t.Fatalf("v%d built %s, want prefix %s", c.version, got, c.prefix)
		}
		tree := DecodeResponse(frame, 18, c.version)
		if tree.Err != nil {
			t.Fatalf("v%d: %v", c.version, tree.Err)
		}
		checkSpans(t, tree)
		_, hdr, body := FrameParts(tree.Root)
		if hdr.Name != "ResponseHeader" || hdr.Note != "v0" || hdr.Len != 4 {
			t.Errorf("v%d header %s %s len %d, want ResponseHeader v0, 4 bytes", c.version, hdr.Name, hdr.Note, hdr.Len)
		}
		keys := body.Child("ApiKeys")
		if keys.Int != 77 || len(keys.Children) != 77 {
			t.Fatalf("v%d: %d api keys", c.version, keys.Int)
		}
		if k := keys.Children[76]; k.Name != "[76]" || k.Child("ApiKey").Int != 76 || k.Child("MaxVersion").Int != 76%13 {
			t.Errorf("v%d: last key %+v", c.version, k.Children)
		}
	}
}

func TestDecodeErrorPathAndOffset(t *testing.T) {
	// ProduceRequest v9 (flexible):
	body := unhex(t, ""+
		"00"+ // 0 transactionalId: null
		"0001"+ // 1 acks
		"00000064"+ // 3 timeoutMs
		"02"+ // 7 topicData: 1 element
		"0274"+ // 8 name "t"
		"04"+ // 10 partitionData: 3 elements
		"00000000 00 00"+ // 11 [0] index 0, records null, no tags
		"00000001 01 00"+ // 17 [1] index 1, records empty, no tags
		"00000002 8927 616263") // 23 [2] index 2, records length 5001-1 = 5000 at 27, 3 bytes left
	// The values of a message that fails are withheld by default (they
	// may be misplaced credentials: withholdMisplaced); shown here.
	tree := (&Decoder{ShowSecrets: true}).DecodeBody(0, 9, false, body)
	if tree.Err == nil {
		t.Fatal("no error")
	}
	want := "ProduceRequest v9 topicData[0].partitionData[2].records: length 5000 exceeds the 3 bytes left (offset 0x1b)"
	if tree.Err.Error() != want {
		t.Errorf("error\n got %s\nwant %s", tree.Err, want)
	}
	if !errors.Is(tree.Err, ErrLength) || tree.Err.Off != 27 {
		t.Errorf("err %v off %d", tree.Err.Err, tree.Err.Off)
	}
	checkSpans(t, tree)
	root := tree.Root
	last := root.Children[len(root.Children)-1]
	if last.Name != nameUndecoded || last.Kind != KindRaw || last.Off != 27 || last.Len != 5 || last.Flags&FlagError == 0 {
		t.Errorf("last node %+v, want undecoded [27,32)", last)
	}
	parts := find(root, "TopicData/[0]/PartitionData")
	if parts == nil || len(parts.Children) != 3 {
		t.Fatalf("partitionData kept %v", parts)
	}
	if p2 := parts.Children[2]; p2.Child("Index").Int != 2 || p2.Child("Records") != nil || p2.End() != 27 {
		t.Errorf("partial element [2] = %+v", p2)
	}
	if r := parts.Children[0].Child("Records"); r.Flags&FlagNull == 0 {
		t.Errorf("records [0] not null: %+v", r)
	}
	if r := parts.Children[1].Child("Records"); r.Flags&FlagNull != 0 || r.Raw == nil || len(r.Raw) != 0 {
		t.Errorf("records [1] not empty: %+v", r)
	}
}

func TestUnknownAPIAndVersion(t *testing.T) {
	body := []byte{1, 2, 3}
	// Withheld by default, as every span not decoded is.
	if tree := DecodeBody(1234, 0, false, body); tree.Root.Raw != nil || tree.Root.Flags&FlagRedacted == 0 ||
		tree.Root.Note != "unknown API key 1234; withheld: bytes not decoded may hold credentials" {
		t.Errorf("unknown key by default: %+v", tree.Root)
	}
	d := Decoder{ShowSecrets: true}
	tree := d.DecodeBody(1234, 0, false, body)
	if !errors.Is(tree.Err, ErrUnknownAPI) || tree.Root.Flags&FlagUnknown == 0 || tree.Root.Kind != KindRaw ||
		tree.Root.Note != "unknown API key 1234" || tree.Root.Name != "UNKNOWN(1234)" || string(tree.Root.Raw) != string(body) {
		t.Errorf("unknown key: err %v root %+v", tree.Err, tree.Root)
	}
	checkSpans(t, tree)
	tree = d.DecodeBody(0, 99, true, body)
	if !errors.Is(tree.Err, ErrUnknownVers) || tree.Root.Name != "ProduceResponse" || tree.Root.Flags&FlagUnknown == 0 {
		t.Errorf("unknown version: err %v root %+v", tree.Err, tree.Root)
	}
	checkSpans(t, tree)

	// A whole request with an unknown key: header v1 still decoded.
	frame := unhex(t, "0000000d 04d2 0000 00000009 0001 41 abcd")
	tree = d.DecodeRequest(frame)
	checkSpans(t, tree)
	_, hdr, b := FrameParts(tree.Root)
	if hdr == nil || hdr.Child("ClientId").Str != "A" || hdr.Child("CorrelationId").Int != 9 {
		t.Fatalf("header %+v", hdr)
	}
	if b == nil || b.Flags&FlagUnknown == 0 || string(b.Raw) != "\xab\xcd" || b.Off != 15 {
		t.Errorf("body %+v", b)
	}
	if !errors.Is(tree.Err, ErrUnknownAPI) || tree.Err.Off != 15 {
		t.Errorf("err %v", tree.Err)
	}
	h, err := ParseRequestHeader(frame[4:])
	if err != nil || h.HeaderVersion != 1 || h.ClientID != "A" || h.Len != 11 {
		t.Errorf("ParseRequestHeader = %+v, %v", h, err)
	}

	tree = DecodeStruct("NoSuchStruct", 0, body)
	if !errors.Is(tree.Err, ErrUnknownAPI) || tree.Root.Flags&FlagUnknown == 0 {
		t.Errorf("unknown struct: %v", tree.Err)
	}
	tree = DecodeStruct("RequestHeader", 9, body)
	if !errors.Is(tree.Err, ErrUnknownVers) {
		t.Errorf("unknown struct version: %v", tree.Err)
	}
}

func TestLeftover(t *testing.T) {
	// ApiVersions v0 request has no fields: every byte is left over.
	tree := DecodeBody(18, 0, false, []byte{0xde, 0xad})
	if !errors.Is(tree.Err, ErrLeftover) || tree.Err.Off != 0 {
		t.Fatalf("err %v", tree.Err)
	}
	checkSpans(t, tree)
	left := tree.Root.Child(nameLeftover)
	if left == nil || left.Kind != KindRaw || left.Len != 2 {
		t.Errorf("leftover %+v", left)
	}
	// Bytes after the frame's declared length.
	frame := unhex(t, "0000000a 0012 0000 00000001 0000 ffff")
	tree = DecodeRequest(frame)
	if !errors.Is(tree.Err, ErrLeftover) || tree.Err.Off != 14 {
		t.Fatalf("frame err %v", tree.Err)
	}
	checkSpans(t, tree)
}

func TestTruncatedFrame(t *testing.T) {
	frame := unhex(t, "00000020 0012 0003 00000002 0003 753033 00 08 7530")
	tree := DecodeRequest(frame)
	checkSpans(t, tree)
	if tree.Root.Flags&FlagTruncated == 0 {
		t.Error("not marked truncated")
	}
	if !errors.Is(tree.Err, ErrLength) || !strings.HasPrefix(tree.Err.Path, "ApiVersionsRequest v3 clientSoftwareName") {
		t.Errorf("err %v", tree.Err)
	}
	for _, in := range []string{"", "0000", "ffffffff 0012"} {
		tree := DecodeRequest(unhex(t, in))
		if tree.Err == nil {
			t.Errorf("%q: no error", in)
		}
		checkSpans(t, tree)
	}
}

func TestLenientNull(t *testing.T) {
	// ApiVersions v3: ClientSoftwareName (not nullable) sent as compact null.
	tree := DecodeBody(18, 3, false, unhex(t, "00 04312e30 00"))
	if tree.Err != nil {
		t.Fatal(tree.Err)
	}
	n := tree.Root.Child("ClientSoftwareName")
	if n.Flags&(FlagNull|FlagLenient) != FlagNull|FlagLenient || n.Note == "" {
		t.Errorf("lenient null %+v", n)
	}
	// SaslAuthenticate v0 AuthBytes (BYTES, not nullable) as -1.
	tree = DecodeBody(36, 0, false, unhex(t, "ffffffff"))
	if n := tree.Root.Child("AuthBytes"); tree.Err != nil || n.Flags&FlagLenient == 0 {
		t.Errorf("lenient bytes: %v %+v", tree.Err, n)
	}
}

func TestSASLRedaction(t *testing.T) {
	token := "\x00alice\x00s3cret"
	body := binary.BigEndian.AppendUint32(nil, uint32(len(token)))
	body = append(body, token...)
	tree := DecodeBody(36, 1, false, body)
	if tree.Err != nil {
		t.Fatal(tree.Err)
	}
	checkSpans(t, tree)
	auth := tree.Root.Child("AuthBytes")
	pw := auth.Child("password")
	if pw == nil || pw.Flags&FlagRedacted == 0 || pw.Str != "" || pw.Off != 4+7 || pw.Len != 6 {
		t.Fatalf("password %+v", pw)
	}
	if u := auth.Child("username"); u.Str != "alice" || u.Flags&FlagRedacted != 0 {
		t.Errorf("username %+v", u)
	}
	js, _ := json.Marshal(BodyJSON(tree.Root))
	if strings.Contains(string(js), base64.StdEncoding.EncodeToString([]byte(token))) {
		t.Errorf("JSON leaks the token: %s", js)
	}
	shown := (&Decoder{ShowSecrets: true}).DecodeBody(36, 1, false, body)
	if pw := shown.Root.Child("AuthBytes").Child("password"); pw.Str != "s3cret" || pw.Flags&FlagRedacted != 0 {
		t.Errorf("ShowSecrets password %+v", pw)
	}

	tok := ParseSASLToken("SCRAM-SHA-256", true, []byte("c=biws,r=abc123,p=cHJvb2Y="))
	if p := tok.Parts; tok.Withheld || tok.Message != SASLScramClientFinal || len(p) != 3 || p[2].Name != "proof" || !p[2].Secret || p[2].Off != 18 || p[2].Len != 8 {
		t.Errorf("SCRAM final %+v", tok)
	}
	tok = ParseSASLToken("", true, []byte("n,,n=bob,r=xyz"))
	if p := tok.Parts; tok.Withheld || len(p) != 3 || p[0].Value != "n,," || p[1].Value != "bob" || p[1].Secret {
		t.Errorf("SCRAM first %+v", tok)
	}
	if tok := ParseSASLToken("", true, []byte{0xde, 0xad}); !tok.Withheld || tok.Parts != nil {
		t.Errorf("binary token not withheld: %+v", tok)
	}
}

func TestHeaderVersions(t *testing.T) {
	for _, c := range []struct {
		key, ver, req, resp int16
	}{
		{0, 8, 1, 0},
		{0, 9, 2, 1},
		{0, 50, 2, 1}, // unknown version inside the open flexible range
		{7, 0, 0, 0},  // ControlledShutdown v0: request header v0
		{7, 1, 1, 0},
		{18, 0, 1, 0},
		{18, 3, 2, 0}, // ApiVersions responses always use header v0 (KIP-511)
		{1234, 0, 1, 0},
	} {
		if got := RequestHeaderVersion(c.key, c.ver); got != c.req {
			t.Errorf("RequestHeaderVersion(%d, %d) = %d, want %d", c.key, c.ver, got, c.req)
		}
		if got := ResponseHeaderVersion(c.key, c.ver); got != c.resp {
			t.Errorf("ResponseHeaderVersion(%d, %d) = %d, want %d", c.key, c.ver, got, c.resp)
		}
	}
	// ControlledShutdown v0: header v0 has no client id.
	h, err := ParseRequestHeader(unhex(t, "0007 0000 0000002a 00000001"))
	if err != nil || h.HeaderVersion != 0 || h.Len != 8 || h.CorrelationID != 42 {
		t.Errorf("header v0: %+v %v", h, err)
	}
	// The same as a whole frame: header v0, then BrokerId.
	tree := DecodeRequest(unhex(t, "0000000c 0007 0000 0000002a 00000001"))
	if tree.Err != nil {
		t.Fatal(tree.Err)
	}
	checkSpans(t, tree)
	_, hdr, body := FrameParts(tree.Root)
	if hdr.Note != "v0" || hdr.Child("ClientId") != nil || hdr.Len != 8 || body.Name != "ControlledShutdownRequest" || body.Child("BrokerId").Int != 1 {
		t.Errorf("ControlledShutdown v0 frame: header %s len %d, body %s", hdr.Note, hdr.Len, body.Name)
	}
	if _, err := ParseRequestHeader(unhex(t, "0012 0003 00000001 0009 41")); !errors.Is(err, ErrLength) {
		t.Errorf("short client id: %v", err)
	}
}

func TestErrorCodeNotes(t *testing.T) {
	for code, want := range map[int16]string{0: "NONE", -1: "UNKNOWN_SERVER_ERROR", 6: "NOT_LEADER_OR_FOLLOWER", 35: "UNSUPPORTED_VERSION", 133: "SHARE_SESSION_LIMIT_REACHED", 9999: "UNKNOWN(9999)"} {
		if got := KafkaErrorName(code); got != want {
			t.Errorf("KafkaErrorName(%d) = %q, want %q", code, got, want)
		}
	}
	if c, ok := KafkaErrorCode("UNSUPPORTED_VERSION"); !ok || c != 35 {
		t.Errorf("KafkaErrorCode = %d, %v", c, ok)
	}
	// ApiVersions v0 response with error 35.
	tree := DecodeBody(18, 0, true, unhex(t, "0023 00000000"))
	if n := tree.Root.Child("ErrorCode"); n.Note != "UNSUPPORTED_VERSION" {
		t.Errorf("note %q", n.Note)
	}
}

func TestNestingBound(t *testing.T) {
	// A synthetic schema nesting deeper than maxDepth.
	f := Field{Name: "Leaf", Type: "int8", Kind: TypeInt8, Versions: Versions{0, MaxVersion}, NullableVersions: NoVersions, TaggedVersions: NoVersions, Tag: -1}
	for i := 0; i < maxDepth+5; i++ {
		f = Field{Name: "S", Type: "S", Kind: TypeStruct, Versions: Versions{0, MaxVersion}, NullableVersions: NoVersions, TaggedVersions: NoVersions, Tag: -1, Fields: []Field{f}}
	}
	m := &MessageSchema{Name: "Deep", APIKey: -1, Type: TypeData, ValidVersions: Versions{0, 0}, FlexibleVersions: NoVersions, Fields: []Field{f}}
	var ip interp
	ip.reset(&Decoder{}, []byte{1}, "struct")
	root := ip.newNode()
	ip.t.Root = root
	ip.message(m, 0, root, 1, true)
	if ip.err == nil || !errors.Is(ip.err, ErrTooDeep) {
		t.Fatalf("err %v, want ErrTooDeep", ip.err)
	}
	ip.t.Err = ip.err
	checkSpans(t, ip.t)
}

func TestNullableStruct(t *testing.T) {
	// ConsumerGroupHeartbeatResponse v0: Assignment is a nullable struct
	// preceded by an INT8 marker.
	m := Lookup(68, true, 0)
	if m == nil {
		t.Skip("no ConsumerGroupHeartbeatResponse in the table")
	}
	body := unhex(t, "00000000 0000 00 00 00000001 00000bb8 ff 00")
	tree := DecodeBody(68, 0, true, body)
	if tree.Err != nil {
		t.Fatal(tree.Err)
	}
	if a := tree.Root.Child("Assignment"); a == nil || a.Flags&FlagNull == 0 || a.Len != 1 {
		t.Errorf("assignment %+v", a)
	}
}

// TestDecodeAllocs pins the allocation budget of a small decode: nodes and
// child slices come from chunks, so a tree costs a handful of allocations
// plus one per string value.
func TestDecodeAllocs(t *testing.T) {
	for _, c := range benchBodies() {
		allocs := testing.AllocsPerRun(50, func() {
			if tree := DecodeBody(c.key, c.ver, c.response, c.body); tree.Err != nil {
				t.Fatal(tree.Err)
			}
		})
		if allocs > 16 {
			t.Errorf("%s: %v allocations per decode, budget 16", c.name, allocs)
		}
	}
}
