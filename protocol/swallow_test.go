package protocol

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// findNamed returns the first node of t, depth first, named name.
func findNamed(n *Node, name string) *Node {
	if n == nil {
		return nil
	}
	if n.Name == name {
		return n
	}
	for _, c := range n.Children {
		if f := findNamed(c, name); f != nil {
			return f
		}
	}
	return nil
}

// swallowing returns first with its length field grown to cover next too:
// the frame a corrupt or hostile length makes of the two.
func swallowing(first, next []byte) []byte {
	b := append(append([]byte(nil), first...), next...)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// TestSwallowedSecretsWithheld: a frame whose length is too large
// swallows the frames after it, which its decode shows as leftover
// bytes. They are withheld, as every span kwire does not decode is,
// whatever the frame and whatever they hold (a SaslAuthenticate token,
// or bytes that look harmless: a lost segment or a damaged length can put
// any frame's secrets in any span); --show-secrets shows them all.
func TestSwallowedSecretsWithheld(t *testing.T) {
	secret := []byte("\x00alice\x00hunter2-SECRET")
	auth := kmsg.NewPtrSASLAuthenticateRequest()
	auth.Version = 1
	auth.SASLAuthBytes = secret
	authFrame := kmsgRequestFrame(auth, 3)

	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version = 1
	hs.Mechanism = "PLAIN"
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 9
	av := kmsg.NewPtrApiVersionsRequest()
	av.Version = 3
	av.ClientSoftwareName, av.ClientSoftwareVersion = "x", "1"

	for _, c := range []struct {
		name     string
		frame    []byte
		withheld bool
	}{
		{"SaslHandshake swallowing SaslAuthenticate", swallowing(kmsgRequestFrame(hs, 2), authFrame), true},
		{"ApiVersions swallowing SaslHandshake and a raw token", swallowing(kmsgRequestFrame(av, 1), append(kmsgRequestFrame(hs, 2), secret...)), true},
		{"ApiVersions with plain leftover", swallowing(kmsgRequestFrame(av, 1), []byte("trailing")), true},
		{"Metadata swallowing SaslAuthenticate", swallowing(kmsgRequestFrame(md, 9), authFrame), true},
		{"Metadata with plain leftover", swallowing(kmsgRequestFrame(md, 9), []byte("just some trailing bytes")), true},
	} {
		var d Decoder
		tr := d.DecodeRequest(c.frame)
		left := findNamed(tr.Root, nameLeftover)
		if left == nil {
			t.Fatalf("%s: no leftover node", c.name)
		}
		if got := left.Flags&FlagRedacted != 0 && left.Raw == nil; got != c.withheld {
			t.Errorf("%s: withheld %v, want %v (%q)", c.name, got, c.withheld, left.Note)
		}
		shown := Decoder{ShowSecrets: true}
		if l := findNamed(shown.DecodeRequest(c.frame).Root, nameLeftover); l == nil || l.Flags&FlagRedacted != 0 || len(l.Raw) == 0 {
			t.Errorf("%s: --show-secrets does not show the leftover", c.name)
		}
	}

	// A SaslAuthenticate response whose header's tagged fields are
	// broken: the rest, the server's SCRAM signature among it, is withheld.
	resp := kmsg.NewPtrSASLAuthenticateResponse()
	resp.Version = 2
	resp.SASLAuthBytes = []byte("v=SERVERSIGNATURE")
	rf := kmsgResponseFrame(resp, 3)
	rf[8] = 0x7f // the header's tagged-field count: 127, far more than there is
	var d Decoder
	tr := d.DecodeResponse(rf, 36, 2)
	if u := findNamed(tr.Root, nameUndecoded); u == nil || u.Flags&FlagRedacted == 0 || u.Raw != nil {
		t.Errorf("SaslAuthenticate response with a broken header: undecoded %+v", u)
	}
	for _, n := range []*Node{tr.Root} {
		if bytes.Contains(n.Raw, []byte("SERVERSIGNATURE")) {
			t.Error("the signature is in the tree")
		}
	}
}

// TestMisplacedSecretsWithheld: a message that can carry secrets and fails
// to decode has every string and bytes value withheld, not only the rest
// after the failure: a damaged length moves the fields after it, and a
// sensitive config value then reads as a ResourceName (the adversarial
// tester's describeconfigs-v4-set-16-02). Every one-byte change of the
// ErrorMessage length prefix is tried; --show-secrets shows the values.
func TestMisplacedSecretsWithheld(t *testing.T) {
	const secret = "Qz-SENSITIVE-VALUE-9758ec5c"
	resp := kmsg.NewPtrDescribeConfigsResponse()
	resp.Version = 4
	res := kmsg.NewDescribeConfigsResponseResource()
	res.ErrorMessage = kmsg.StringPtr("")
	res.ResourceType = kmsg.ConfigResourceTypeBroker
	res.ResourceName = "1"
	for _, c := range []struct {
		name, value string
		sensitive   bool
	}{{"neutral.x", "plain", false}, {"ssl.keystore.password", secret, true}, {"neutral.y", "plain", false}} {
		cfg := kmsg.NewDescribeConfigsResponseResourceConfig()
		cfg.Name, cfg.Value, cfg.IsSensitive = c.name, kmsg.StringPtr(c.value), c.sensitive
		res.Configs = append(res.Configs, cfg)
	}
	resp.Resources = append(resp.Resources, res)
	frame := kmsgResponseFrame(resp, 1)
	// Offset of the ErrorMessage's compact length: length 4, correlation
	// ID 4, header tags 1, ThrottleTimeMs 4, results count 1, ErrorCode 2.
	const at = 4 + 4 + 1 + 4 + 1 + 2
	if frame[at] != 1 { // compact: length+1, empty string
		t.Fatalf("byte %d is %#x, not the empty ErrorMessage's length", at, frame[at])
	}
	leaks := 0
	for v := 0; v < 256; v++ {
		b := append([]byte(nil), frame...)
		b[at] = byte(v)
		var d Decoder
		tr := d.DecodeResponse(b, 32, 4)
		if tr.Err == nil {
			continue // decoded (a length that fits): read where written
		}
		if n := findValue(tr.Root, secret); n != nil {
			leaks++
			t.Errorf("ErrorMessage length %#x: the secret shows in %s (%q)", v, n.Name, n.Note)
		}
	}
	// The tester's byte: the secret lands in ResourceName; shown with
	// --show-secrets.
	b := append([]byte(nil), frame...)
	b[at] = 0x04
	show := Decoder{ShowSecrets: true}
	if findValue(show.DecodeResponse(b, 32, 4).Root, secret) == nil {
		t.Error("--show-secrets does not show the misplaced value")
	}
}

// findValue returns a node under n whose string or bytes value holds s.
func findValue(n *Node, s string) *Node {
	if n == nil {
		return nil
	}
	if bytes.Contains([]byte(n.Str), []byte(s)) || bytes.Contains(n.Raw, []byte(s)) {
		return n
	}
	for _, c := range n.Children {
		if f := findValue(c, s); f != nil {
			return f
		}
	}
	return nil
}

// TestMetadataLogRecordsWithheld: the records of the KRaft metadata log
// (__cluster_metadata, topic ID Uuid(0, 1)), in Fetch responses by name
// (v12) or by ID (v16) and in FetchSnapshot responses, have every key,
// value and header withheld, their batch bytes too (compressed or not);
// the batch headers stay; another topic's records are shown, and
// --show-secrets shows these.
func TestMetadataLogRecordsWithheld(t *testing.T) {
	const secret = `password="Qz-jaas-secret-77"`
	rec := func(body []byte) []byte { return append(binary.AppendVarint(nil, int64(len(body))), body...) }
	var payload []byte
	payload = append(payload, rec(append([]byte{0, 0, 0, 1 /* key null */, byte(2 * len(secret))}, append([]byte(secret), 2, 2, 'k', 2, 'v')...))...)
	fetch := func(ver int16, name string, id [16]byte, codec Codec) []byte {
		r := kmsg.NewPtrFetchResponse()
		r.Version = ver
		tp := kmsg.NewFetchResponseTopic()
		tp.Topic, tp.TopicID = name, id
		p := kmsg.NewFetchResponseTopicPartition()
		p.RecordBatches = rawBatch(t, codec, 1, payload)
		tp.Partitions = append(tp.Partitions, p)
		r.Topics = append(r.Topics, tp)
		return kmsgResponseFrame(r, 1)
	}
	snapshot := func(name string) []byte {
		r := kmsg.NewPtrFetchSnapshotResponse()
		tp := kmsg.NewFetchSnapshotResponseTopic()
		tp.Topic = name
		p := kmsg.NewFetchSnapshotResponseTopicPartition()
		p.Bytes = rawBatch(t, CodecNone, 1, payload)
		tp.Partitions = append(tp.Partitions, p)
		r.Topics = append(r.Topics, tp)
		return kmsgResponseFrame(r, 1)
	}
	meta := [16]byte{15: 1}
	other := [16]byte{1, 2, 3}
	for _, c := range []struct {
		name     string
		frame    []byte
		key, ver int16
		withheld bool
	}{
		{"Fetch v12 __cluster_metadata", fetch(12, "__cluster_metadata", [16]byte{}, CodecNone), 1, 12, true},
		{"Fetch v16 metadata topic ID", fetch(16, "", meta, CodecNone), 1, 16, true},
		{"Fetch v16 metadata topic ID, gzip", fetch(16, "", meta, CodecGzip), 1, 16, true},
		{"FetchSnapshot __cluster_metadata", snapshot("__cluster_metadata"), 59, 1, true},
		{"Fetch v12 another topic", fetch(12, "orders", [16]byte{}, CodecNone), 1, 12, false},
		{"Fetch v16 another topic ID", fetch(16, "", other, CodecNone), 1, 16, false},
	} {
		for _, records := range []bool{true, false} {
			d := Decoder{Records: records}
			tr := d.DecodeResponse(c.frame, c.key, c.ver)
			if tr.Err != nil {
				t.Fatalf("%s: %v", c.name, tr.Err)
			}
			// Records not decoded are withheld whatever their topic.
			leak := findValue(tr.Root, secret) != nil
			if leak == (c.withheld || !records) {
				t.Errorf("%s (records decoded %v): secret shown %v", c.name, records, leak)
			}
			if c.withheld && records && findNamed(tr.Root, "BaseOffset") == nil {
				t.Errorf("%s: the batch header is not shown", c.name)
			}
			show := Decoder{Records: records, ShowSecrets: true}
			if findValue(show.DecodeResponse(c.frame, c.key, c.ver).Root, secret) == nil {
				t.Errorf("%s (records decoded %v): --show-secrets does not show the record", c.name, records)
			}
		}
	}
}

// TestMisframedSecretsWithheld: an AlterConfigs request whose API key was
// damaged reads as another API's request (DescribeConfigs, Metadata,
// ListOffsets, ...) that fails or leaves bytes over; none of its strings
// may show the password it holds, whichever key the damage made. A frame
// that decodes cleanly as another API is read as that API. --show-secrets
// shows the values.
func TestMisframedSecretsWithheld(t *testing.T) {
	const secret = "Qz-misframed-password-3510d7e4"
	req := kmsg.NewPtrAlterConfigsRequest()
	req.Version = 1
	res := kmsg.NewAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeBroker, "1"
	for _, c := range [][2]string{{"listener.name.a.sasl.jaas.config", secret}, {"neutral", "plain"}} {
		cfg := kmsg.NewAlterConfigsRequestResourceConfig()
		cfg.Name, cfg.Value = c[0], kmsg.StringPtr(c[1])
		res.Configs = append(res.Configs, cfg)
	}
	req.Resources = append(req.Resources, res)
	frame := kmsgRequestFrame(req, 1)
	checked := 0
	for key := range int16(80) {
		for ver := range int16(4) {
			b := append([]byte(nil), frame...)
			binary.BigEndian.PutUint16(b[4:], uint16(key))
			binary.BigEndian.PutUint16(b[6:], uint16(ver))
			if Lookup(key, false, ver) == nil || RequestHeaderVersion(key, ver) != 1 {
				continue // unknown (withheld raw) or another header
			}
			var d Decoder
			tr := d.DecodeRequest(b)
			if tr.Err == nil {
				continue
			}
			checked++
			if n := findValue(tr.Root, secret); n != nil {
				t.Errorf("key %d v%d: the password shows in %s (%v)", key, ver, n.Name, tr.Err)
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d misframed decodes failed: the test checks little", checked)
	}
	b := append([]byte(nil), frame...)
	binary.BigEndian.PutUint16(b[4:], 32) // DescribeConfigs v1
	if findValue((&Decoder{ShowSecrets: true}).DecodeRequest(b).Root, secret) == nil {
		t.Error("--show-secrets does not show the misframed values")
	}
}

// TestLenientSecretsWithheld: a message that can carry secrets and was
// read only by tolerating a protocol violation (here a null Synonyms
// array, which is not nullable: a frame cut and filled by the next one's
// bytes reads so) has its values withheld, as one that failed to decode:
// the bytes that said "sensitive" may be the ones out of place. The same
// message without the violation shows its values (the config is not
// sensitive by name or flag), and --show-secrets shows them either way.
func TestLenientSecretsWithheld(t *testing.T) {
	const value = "Qz-NOT-MARKED-0b7a1f"
	resp := kmsg.NewPtrDescribeConfigsResponse()
	resp.Version = 4
	res := kmsg.NewDescribeConfigsResponseResource()
	res.ResourceType = kmsg.ConfigResourceTypeBroker
	res.ResourceName = "1"
	cfg := kmsg.NewDescribeConfigsResponseResourceConfig()
	cfg.Name, cfg.Value = "neutral.z", kmsg.StringPtr(value)
	res.Configs = append(res.Configs, cfg)
	resp.Resources = append(resp.Resources, res)
	frame := kmsgResponseFrame(resp, 1)
	// After the value: ReadOnly, ConfigSource, IsSensitive, then the
	// Synonyms' compact count (1: empty; 0: null).
	at := bytes.Index(frame, []byte(value)) + len(value) + 3
	if frame[at] != 1 {
		t.Fatalf("byte %d is %#x, not the empty Synonyms' count", at, frame[at])
	}
	var d Decoder
	if tr := d.DecodeResponse(frame, 32, 4); tr.Err != nil || findValue(tr.Root, value) == nil {
		t.Fatalf("intact response: err %v, value shown %v", tr.Err, findValue(tr.Root, value) != nil)
	}
	b := append([]byte(nil), frame...)
	b[at] = 0
	tr := d.DecodeResponse(b, 32, 4)
	if tr.Err != nil {
		t.Fatalf("a null Synonyms does not decode leniently: %v", tr.Err)
	}
	if n := findValue(tr.Root, value); n != nil {
		t.Errorf("the value shows in %s (%q) after a violation", n.Name, n.Note)
	}
	show := Decoder{ShowSecrets: true}
	if findValue(show.DecodeResponse(b, 32, 4).Root, value) == nil {
		t.Error("--show-secrets does not show the value")
	}
}

// TestDecodeAloneMisplacedWithheld: input given alone (kwire decode of a
// body, or of a frame whose length says more than it holds) may end
// early, so a message of an API that carries no secret keeps the values
// read before a failure for want of bytes. Bytes left over, or a length
// that is not one (negative, a broken varint), are no such end: the
// fields were not read where they were written, and a credential may sit
// in any string, as in a capture's frames. Here the body of a
// SaslAuthenticate v1 response (the server's SCRAM signature) given as a
// FindCoordinator v0 response: its Host holds the signature, with 4 bytes
// left over.
func TestDecodeAloneMisplacedWithheld(t *testing.T) {
	const sig = "v=Qz-SERVER-SIGNATURE-4d1e"
	resp := kmsg.NewPtrSASLAuthenticateResponse()
	resp.Version = 1
	resp.SASLAuthBytes = []byte(sig)
	body := resp.AppendTo(nil)
	var d Decoder
	tr := d.DecodeBody(10, 0, true, body) // FindCoordinator v0
	if tr.Err == nil || !errors.Is(tr.Err, ErrLeftover) {
		t.Fatalf("FindCoordinator v0: err %v, want bytes left over", tr.Err)
	}
	if n := findValue(tr.Root, sig); n != nil {
		t.Errorf("bytes left over: the signature shows in %s (%q)", n.Name, n.Note)
	}
	show := Decoder{ShowSecrets: true}
	if findValue(show.DecodeBody(10, 0, true, body).Root, sig) == nil {
		t.Error("--show-secrets does not show the Host")
	}

	// A negative length (not -1) after a string: not an early end.
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 1
	for _, name := range []string{sig, "next"} {
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr(name)
		md.Topics = append(md.Topics, mt)
	}
	mb := md.AppendTo(nil)
	at := bytes.Index(mb, []byte("next")) - 2
	neg := append([]byte(nil), mb...)
	neg[at], neg[at+1] = 0xff, 0xf0
	tr = d.DecodeBody(3, 1, false, neg)
	if tr.Err == nil || !errors.Is(tr.Err, ErrNegative) {
		t.Fatalf("Metadata v1 with a negative length: err %v", tr.Err)
	}
	if n := findValue(tr.Root, sig); n != nil {
		t.Errorf("negative length: the first topic shows in %s (%q)", n.Name, n.Note)
	}

	// Cut short: the values read before the end are kept (a log line cut
	// at its length limit).
	tr = d.DecodeBody(3, 1, false, mb[:at+3])
	if tr.Err == nil || !errors.Is(tr.Err, ErrLength) && !errors.Is(tr.Err, ErrShort) {
		t.Fatalf("Metadata v1 cut short: err %v", tr.Err)
	}
	if findValue(tr.Root, sig) == nil {
		t.Error("cut short: the first topic, read before the end, is not shown")
	}
}
