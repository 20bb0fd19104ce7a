package dissect

import (
	"encoding/binary"
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"

	"github.com/kwire/kwire/reassembly"
)

// connOn opens a connection between two addresses on d.
func connOn(d *Dissector, idx int, a, b string, syn bool) *reassembly.Conn {
	c := &reassembly.Conn{Index: idx, A: netip.MustParseAddrPort(a), B: netip.MustParseAddrPort(b), SawSYN: syn}
	d.Open(c)
	return c
}

func TestDetectOnOtherPort(t *testing.T) {
	sink := &recSink{}
	d := New(Options{Detect: true}, sink)
	// The first packet seen is the broker's (A is the broker): who sends
	// requests decides the client, not who was seen first.
	c := connOn(d, 0, "10.0.0.2:19092", "10.0.0.1:40000", false)
	d.Data(c, reassembly.AtoB, reassembly.Chunk{Data: hx(t, `00 00 00 04 00 00 00 63`), Frame: 1, Time: pktTime(1)})
	d.Data(c, reassembly.BtoA, reassembly.Chunk{Data: frame(t, metadataV12Req), Frame: 2, Time: pktTime(2)})
	d.Data(c, reassembly.AtoB, reassembly.Chunk{Data: frame(t, metadataV12Resp), Frame: 3, Time: pktTime(3)})
	d.Finish()
	open := sink.events(EventOpen)
	if len(open) != 1 || open[0].Dir != reassembly.BtoA || !strings.Contains(open[0].Detail, "detected") {
		t.Fatalf("open events %+v", open)
	}
	if len(sink.ex) != 2 {
		t.Fatalf("kinds %v", sink.kinds())
	}
	// The broker's first packet answers an uncaptured request (orphan);
	// then the Metadata exchange pairs.
	if sink.ex[0].Kind != KindOrphan || sink.ex[0].CorrelationID != 99 {
		t.Errorf("first exchange %+v", sink.ex[0])
	}
	e := sink.ex[1]
	wantExchange(t, e, KindPaired, 3, 12, 2)
	if e.Client != netip.MustParseAddrPort("10.0.0.1:40000") || e.Broker != netip.MustParseAddrPort("10.0.0.2:19092") {
		t.Errorf("client %v broker %v", e.Client, e.Broker)
	}
}

func TestNotOnPortWithoutDetect(t *testing.T) {
	sink := &recSink{}
	d := New(Options{}, sink)
	c := connOn(d, 0, "10.0.0.1:40000", "10.0.0.2:19092", true)
	d.Data(c, reassembly.AtoB, reassembly.Chunk{Data: frame(t, metadataV12Req), Frame: 1})
	d.Finish()
	sk := sink.events(EventSkipped)
	if len(sk) != 1 || len(sink.ex) != 0 || !strings.Contains(sk[0].Detail, "9092") {
		t.Fatalf("skipped %+v exchanges %d", sk, len(sink.ex))
	}
	if s := d.Summary(); s.Skipped != 1 || len(s.SkipReasons) != 1 || s.SkipReasons[0] != (Reason{"not on a Kafka port", 1}) {
		t.Errorf("summary %+v", s)
	}
}

// A TLS 1.2 ClientHello record header and the start of its handshake.
const clientHello = `
16 03 01 00 c8       // handshake record, TLS 1.0 legacy version, 200 bytes
01 00 00 c4          // ClientHello, 196 bytes
03 03                // client version TLS 1.2
5a 5b 5c 5d 5e 5f 60 61 62 63 64 65 66 67 68 69 // random ...
`

func TestTLSOnKafkaPort(t *testing.T) {
	r := newRig(t, Options{}, true)
	r.client(hx(t, clientHello))
	r.broker(hx(t, `16 03 03 00 5d 02 00 00 59 03 03`))
	r.client(hx(t, `17 03 03 00 20 01 02 03 04`))
	r.d.Finish()
	tls := r.sink.events(EventTLS)
	// The ClientHello record is cut short (200 bytes announced): the
	// handshake never completes.
	if len(tls) != 1 || tls[0].Detail != "not decrypted: the TLS handshake did not complete in the capture" ||
		tls[0].Frame != 1 || tls[0].TLS == nil || tls[0].TLS.Reason != TLSIncomplete {
		t.Fatalf("tls events %+v", tls)
	}
	if len(r.sink.ex) != 0 || len(r.sink.events(EventBadFrame)) != 0 {
		t.Errorf("exchanges %d bad frames %d", len(r.sink.ex), len(r.sink.events(EventBadFrame)))
	}
	if s := r.d.Summary(); s.TLS != 1 || s.Kafka != 0 || s.Frames != 0 || len(s.TLSReasons) != 1 || s.TLSReasons[0].Reason != TLSIncomplete {
		t.Errorf("summary %+v", s)
	}
}

func TestTLSWithDetectElsewhere(t *testing.T) {
	sink := &recSink{}
	d := New(Options{Detect: true}, sink)
	c := connOn(d, 0, "10.0.0.1:40000", "10.0.0.2:443", true)
	d.Data(c, reassembly.AtoB, reassembly.Chunk{Data: hx(t, clientHello), Frame: 1})
	d.Finish()
	if s := d.Summary(); s.Kafka != 0 || s.Skipped != 1 || s.SkipReasons[0].Reason != "TLS" {
		t.Errorf("summary %+v", s)
	}
}

func TestHTTPOnKafkaPort(t *testing.T) {
	r := newRig(t, Options{}, true)
	r.client([]byte("GET /metrics HTTP/1.1\r\nHost: broker:9092\r\n\r\n"))
	r.broker([]byte("HTTP/1.1 400 Bad Request\r\n\r\n"))
	r.d.Finish()
	sk := r.sink.events(EventSkipped)
	if len(sk) != 1 || sk[0].Detail != "HTTP, not Kafka: HTTP/1.x GET /metrics" || len(r.sink.ex) != 0 {
		t.Fatalf("skipped %+v, %d exchanges", sk, len(r.sink.ex))
	}
	if s := r.d.Summary(); s.Kafka != 0 || s.SkipReasons[0] != (Reason{"HTTP", 1}) {
		t.Errorf("summary %+v", s)
	}
}

// The start of a ClickHouse native-protocol client Hello.
const clickhouseHello = `
00                   // packet type 0: Hello
11 43 6c 69 63 6b 48 6f 75 73 65 20 63 6c 69 65 6e 74 // "ClickHouse client"
17 08                // version 23.8
b4 a9 03             // protocol revision (varint)
07 64 65 66 61 75 6c 74 // database "default"
07 64 65 66 61 75 6c 74 // user "default"
00                   // password ""
`

func TestClickHouseNotKafka(t *testing.T) {
	for _, port := range []string{"9000", "9092"} {
		sink := &recSink{}
		d := New(Options{Detect: true, Ports: []uint16{}}, sink)
		c := connOn(d, 0, "10.0.0.1:40000", "10.0.0.2:"+port, true)
		d.Data(c, reassembly.AtoB, reassembly.Chunk{Data: hx(t, clickhouseHello), Frame: 1})
		d.Data(c, reassembly.BtoA, reassembly.Chunk{Data: hx(t, `00 0a 43 6c 69 63 6b 48 6f 75 73 65 17 08`), Frame: 2})
		d.Finish()
		if s := d.Summary(); s.Kafka != 0 || s.Skipped != 1 || s.SkipReasons[0].Reason != "not Kafka" {
			t.Errorf("port %s: summary %+v", port, s)
		}
	}
}

func TestRandomStreamsNotDetected(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	sink := &recSink{}
	d := New(Options{Detect: true, Ports: []uint16{}}, sink)
	const n = 1000
	for i := range n {
		c := connOn(d, i, "10.0.0.1:40000", "10.0.0.2:7000", rng.IntN(2) == 0)
		for p := range 1 + rng.IntN(4) {
			b := make([]byte, 1+rng.IntN(1500))
			for j := range b {
				b[j] = byte(rng.UintN(256))
			}
			// Half the streams start with a small length, as Kafka does.
			if i%2 == 0 && p == 0 && len(b) >= 4 {
				b[0], b[1] = 0, 0
			}
			d.Data(c, reassembly.Dir(rng.IntN(2)), reassembly.Chunk{Data: b, Frame: int64(p + 1)})
		}
		d.Close(c, reassembly.CloseFIN, pktTime(0))
	}
	s := d.Summary()
	if s.Kafka != 0 || s.Skipped != n || len(sink.ex) != 0 {
		t.Fatalf("random streams: %d recognised as Kafka, %d skipped, %d exchanges", s.Kafka, s.Skipped, len(sink.ex))
	}
}

func TestCheckRequestStrict(t *testing.T) {
	ok := frame(t, metadataV12Req)
	for _, tc := range []struct {
		name string
		b    []byte
		want verdict
	}{
		{"metadata v12", ok, vYes},
		{"prefix only", ok[:9], vMore},
		{"unknown key 999", patch(ok, 4, 0x03, 0xe7), vNo},
		{"version 99 of Metadata", patch(ok, 6, 0, 99), vNo},
		{"ApiVersions v99 (KIP-511: newer than the broker and the schema)", hx(t, apiVersionsV99Req), vYes},
		{"ApiVersions v200", patch(hx(t, apiVersionsV99Req), 6, 0, 200), vNo},
		{"negative correlation id", patch(ok, 8, 0xff), vNo},
		{"client id longer than the frame", patch(ok, 12, 0x00, 0x40), vNo},
		{"control character in client id", patch(ok, 15, 0x01), vNo},
		{"length too small", patch(ok, 0, 0, 0, 0, 7), vNo},
		{"ControlledShutdown v0 (header v0)", hx(t, `00 00 00 0c 00 07 00 00 00 00 00 01 00 00 00 05`), vYes},
		{"HTTP", []byte("POST /x HTTP/1.1\r\n"), vNo},
		{"TLS", hx(t, clientHello), vNo},
	} {
		if got := checkRequest(tc.b, DefaultMaxFrame, true); got != tc.want {
			t.Errorf("%s: verdict %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestClientIDControlInSync: on a connection in sync (seen from its SYN
// on a broker port) a request whose client id holds a tab, a newline or a
// carriage return is decoded and paired like another; other control
// characters are refused, in sync too, as a damaged client id length
// swallowing binary fields (and a SASL token with them) would show them;
// detection and resynchronisation refuse them all.
func TestClientIDControlInSync(t *testing.T) {
	ok := frame(t, metadataV12Req)
	for _, c := range []struct {
		b               byte
		lenient, strict verdict
	}{{'\t', vYes, vNo}, {'\n', vYes, vNo}, {'\r', vYes, vNo}, {0x1b, vNo, vNo}, {0x00, vNo, vNo}, {0x01, vNo, vNo}, {0x7f, vNo, vNo}} {
		b := patch(ok, 15, c.b)
		if got := checkRequest(b, DefaultMaxFrame, false); got != c.lenient {
			t.Errorf("lenient check of a client id with %#x: verdict %d, want %d", c.b, got, c.lenient)
		}
		if got := checkRequest(b, DefaultMaxFrame, true); got != c.strict {
			t.Errorf("strict check of a client id with %#x: verdict %d, want %d", c.b, got, c.strict)
		}
	}
	for _, c := range []byte{'\t', '\n', '\r'} {
		r := newRig(t, Options{}, true)
		body := []byte{0, 0, 0, 0} // MetadataRequest v1: Topics, empty array
		req := reqFrame(3, 1, 7, body)
		req[4+8+2+1] = c // "kwire" -> "k?ire"
		r.client(req)
		r.broker(respFrame(7, false, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}))
		r.d.Finish()
		if len(r.sink.ex) != 1 || r.sink.ex[0].Kind != KindPaired {
			t.Fatalf("client id with %#x: exchanges %v, events %+v", c, r.sink.kinds(), r.sink.ev)
		}
		e := r.sink.ex[0]
		e.Decode()
		if e.Request.Tree == nil || e.Request.Tree.Err != nil {
			t.Fatalf("client id with %#x: request not decoded: %+v", c, e.Request)
		}
		if got, want := e.ClientID, "k"+string(c)+"ire"; got != want {
			t.Errorf("client id %q, want %q", got, want)
		}
		if bad := r.sink.events(EventBadFrame); len(bad) != 0 {
			t.Errorf("client id with %#x: bad frame %+v", c, bad[0])
		}
	}
}

func patch(b []byte, off int, v ...byte) []byte {
	out := append([]byte(nil), b...)
	copy(out[off:], v)
	return out
}

func TestDiagnose(t *testing.T) {
	for _, tc := range []struct {
		b    []byte
		want string
	}{
		{hx(t, clientHello), "TLS record"},
		{[]byte("GET / HTTP/1.1"), "HTTP"},
		{[]byte("POST"), "HTTP"},
		{hx(t, `00 00 00 10 60 82 01 00`), "GSSAPI"},
		{frame(t, plainToken), "SASL PLAIN"},
		{append(hx(t, `00 00 00 13`), "n,,n=user,r=nonce12"...), "SCRAM"},
		{hx(t, `ff ff ff ff`), "negative frame length -1"},
		{hx(t, `7f 00 00 00`), "out of range"},
	} {
		if got := diagnose(tc.b, false); !strings.Contains(got, tc.want) {
			t.Errorf("diagnose(% x) = %q, want %q", tc.b[:min(8, len(tc.b))], got, tc.want)
		}
	}
}

func TestTLSStartsConnectionOnly(t *testing.T) {
	// No SYN, the client's first bytes are mid-stream TLS application data.
	r := newRig(t, Options{}, false)
	r.client(hx(t, `17 03 03 00 40 de ad be ef`))
	r.d.Finish()
	if len(r.sink.events(EventTLS)) != 1 {
		t.Errorf("mid-stream TLS not recognised: %+v", r.sink.ev)
	}
	// After Kafka frames, bytes that look like a TLS record are a bad
	// frame to resync from, not a reason to stop dissecting.
	r = newRig(t, Options{}, true)
	r.client(frame(t, metadataV12Req))
	r.broker(frame(t, metadataV12Resp))
	md := frame(t, metadataV12Req)
	md[11] = 3
	r.client(hx(t, `16 03 03 00 20 01 02 03`), md)
	mr := frame(t, metadataV12Resp)
	mr[7] = 3
	r.broker(mr)
	r.d.Finish()
	if len(r.sink.events(EventTLS)) != 0 || len(r.sink.ex) != 2 || r.sink.ex[1].CorrelationID != 3 {
		t.Errorf("TLS events %d, exchanges %v", len(r.sink.events(EventTLS)), r.sink.kinds())
	}
	if bad := r.sink.events(EventBadFrame); len(bad) != 1 || !strings.Contains(bad[0].Detail, "TLS record") {
		t.Errorf("bad frames %+v", bad)
	}
}

// TestUnexplainedOrphans: an orphan response counts as a problem
// (Problems.Unexplained) only where every request should have been
// captured: on a connection seen from its SYN with nothing lost before it.
// Caught mid-stream, or after a gap in the client's bytes, its request
// went before the capture or in the gap.
func TestUnexplainedOrphans(t *testing.T) {
	req := reqFrame(3, 1, 7, []byte{0, 0, 0, 0})
	stray := respFrame(99, false, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	for _, tc := range []struct {
		name string
		syn  bool
		gap  bool
		want int64
	}{
		{"from the SYN", true, false, 1},
		{"mid-stream", false, false, 0},
		{"after a gap in the requests", true, true, 0},
	} {
		r := newRig(t, Options{}, tc.syn)
		r.client(req)
		if tc.gap {
			r.d.Gap(r.c, reassembly.AtoB, 40, pktTime(r.pkt))
		}
		r.broker(respFrame(7, false, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}))
		r.broker(stray)
		r.d.Finish()
		s := r.d.Summary()
		if s.Orphans != 1 || s.Unexplained != tc.want {
			t.Errorf("%s: %d orphans, %d unexplained, want 1 and %d", tc.name, s.Orphans, s.Unexplained, tc.want)
		}
	}
}

// TestDamagedClientIDSwallowsNoToken: an OAUTHBEARER SaslAuthenticate
// whose client id length was damaged to take in the token after it (an
// adversarial mutant: the client id read "adv\x00Wn,,\x01host=h\x01auth=Bearer
// ...") is refused as a header, not shown as a client id.
func TestDamagedClientIDSwallowsNoToken(t *testing.T) {
	const token = "Qz-BEARER-7cafc0d9a915"
	auth := []byte("n,,\x01host=h\x01auth=Bearer " + token + "\x01\x01")
	b := []byte{0, 0, 0, 0, 0, 36, 0, 2, 0, 0, 0, 2, 0, 3, 'a', 'd', 'v', 0} // length, SaslAuthenticate v2, corr 2, client id "adv", header tags
	b = append(b, byte(len(auth)+1))
	b = append(b, auth...)
	b = append(b, 0)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	bad := patch(b, 13, byte(3+1+1+len("n,,\x01host=h\x01auth=Bearer ")+8)) // the client id runs into the token
	for _, f := range [][]byte{b, bad} {
		r := newRig(t, Options{}, true)
		r.client(f)
		r.d.Finish()
		for _, e := range r.sink.ex {
			e.Decode()
			if strings.Contains(e.ClientID, "Bearer") || strings.Contains(e.ClientID, token[:8]) {
				t.Errorf("client id %q shows the token", e.ClientID)
			}
		}
	}
}
