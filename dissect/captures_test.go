package dissect

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kwire/kwire/protocol"
)

// End-to-end facts about the golden captures, as pcaps/README.md lists
// them: what each scenario must look like once dissected.

func dissectCapture(t *testing.T, name string) runResult {
	t.Helper()
	loadCapture(t, name) // skips when missing
	return dissectFile(t, filepath.Join("..", "pcaps", name))
}

func TestCaptureUnsupportedVersions(t *testing.T) {
	r := dissectCapture(t, "unsupported-versions.pcap")
	if len(r.sink.ex) != 3 {
		t.Fatalf("kinds %v", r.sink.kinds())
	}
	v99, v5, md := r.sink.ex[0], r.sink.ex[1], r.sink.ex[2]
	if v99.Kind != KindPaired || v99.APIKey != 18 || v99.APIVersion != 99 || !hasNote(v99, "UNSUPPORTED_VERSION") {
		t.Errorf("ApiVersions v99: %+v", v99)
	}
	if _, _, body := protocol.FrameParts(v99.Response.Tree.Root); body == nil || body.Child("ErrorCode") == nil || body.Child("ErrorCode").Int != 35 {
		t.Errorf("ApiVersions v99 response not decoded as v0 with error 35: %v", v99.Response.Tree.Err)
	}
	if v5.Kind != KindPaired || v5.APIVersion != 5 || len(v5.Advertised) == 0 || v5.Response.Tree.Err != nil {
		t.Errorf("ApiVersions v5: %+v", v5)
	}
	if md.Kind != KindUnanswered || md.APIKey != 3 || md.APIVersion != 99 ||
		!hasNote(md, "connection closed with no response — the broker's answer to an unsupported version") ||
		!hasNote(md, "outside the broker's advertised range") {
		t.Errorf("Metadata v99: kind %d notes %q", md.Kind, md.Notes)
	}
	adv := r.sink.ex[1].Advertised
	found := false
	for _, a := range adv {
		found = found || a.Key == 18 && a.Min == 0 && a.Max == 5
	}
	if !found {
		t.Errorf("advertised ranges %v lack ApiVersions 0-5", adv)
	}
}

func TestCaptureMixedVersionsKIP511(t *testing.T) {
	r := dissectCapture(t, "mixed-versions.pcap")
	downgrades := 0
	for i, e := range r.sink.ex {
		if e.APIKey != 18 || !hasNote(e, "UNSUPPORTED_VERSION") {
			continue
		}
		downgrades++
		// The client retries on the same connection with a lower version,
		// answered normally.
		for _, next := range r.sink.ex[i+1:] {
			if next.Conn == e.Conn && next.APIKey == 18 {
				if next.APIVersion >= e.APIVersion || hasNote(next, "UNSUPPORTED_VERSION") || next.Advertised == nil {
					t.Errorf("retry after v%d: v%d notes %q", e.APIVersion, next.APIVersion, next.Notes)
				}
				break
			}
		}
	}
	if downgrades == 0 {
		t.Fatal("no KIP-511 downgrade found")
	}
	// Two brokers with different advertised Produce ranges.
	var maxes []int16
	for _, b := range dissectorAdvertised(t, "mixed-versions.pcap") {
		if rg, ok := b.Range(0); ok {
			maxes = append(maxes, rg.Max)
		}
	}
	if len(maxes) != 2 || maxes[0] == maxes[1] {
		t.Errorf("Produce max versions per broker %v, want two different", maxes)
	}
	if s := r.sum; s.Paired != s.Exchanges || s.Unsupported != 0 || s.DecodeErrors != 0 {
		t.Errorf("summary %+v", s)
	}
}

func dissectorAdvertised(t *testing.T, name string) []BrokerVersions {
	t.Helper()
	sink := &recSink{}
	d := New(Options{Ports: capPorts}, sink)
	runFile(t, d, filepath.Join("..", "pcaps", name))
	return d.Advertised()
}

func TestCaptureSASLv0Raw(t *testing.T) {
	r := dissectCapture(t, "sasl-v0-raw.pcap")
	sasl, bad := 0, 0
	for _, e := range r.sink.ex {
		if e.Kind != KindSASL {
			continue
		}
		sasl++
		if e.Mechanism != "PLAIN" || e.User != "capgen" || !redacted(e.Request.Tree.Root) || !hasNote(e, "SASL secret withheld (PLAIN)") {
			t.Errorf("SASL exchange: mechanism %q user %q notes %q", e.Mechanism, e.User, e.Notes)
		}
		if e.Response == nil {
			bad++
		}
	}
	if sasl == 0 || bad != 1 {
		t.Errorf("%d raw SASL exchanges, %d unanswered (want one: the wrong password)", sasl, bad)
	}
	s := r.sum
	if s.BadFrames != 0 || s.Resyncs != 0 || s.Orphans != 0 || s.Unanswered != 0 || s.DecodeErrors != 0 {
		t.Errorf("summary %+v", s)
	}
	// After the token, Kafka framing resumes: Metadata, Produce, ...
	keys := map[int16]bool{}
	for _, e := range r.sink.ex {
		if e.Kind == KindPaired {
			keys[e.APIKey] = true
		}
	}
	for _, k := range []int16{3, 0, 2, 1} {
		if !keys[k] {
			t.Errorf("no paired %s after raw SASL", protocol.APIName(k))
		}
	}
}

func TestCaptureTLS(t *testing.T) {
	r := dissectCapture(t, "kgo-tls.pcap")
	s := r.sum
	if s.TLS == 0 || s.TLS != s.Connections || s.Frames != 0 || s.BadFrames != 0 || len(r.sink.ex) != 0 {
		t.Errorf("summary %+v", s)
	}
	if n := len(r.sink.events(EventTLS)); n != s.TLS {
		t.Errorf("%d TLS events for %d connections", n, s.TLS)
	}
}

func TestCaptureAcks0AndUnanswered(t *testing.T) {
	r := dissectCapture(t, "kgo-produce-consume.pcap")
	s := r.sum
	if s.NoResponse != 1 || s.Unanswered != 2 || s.Orphans != 0 || s.BadFrames != 0 || s.Resyncs != 0 || s.DecodeErrors != 0 {
		t.Errorf("summary %+v", s)
	}
	for _, e := range r.sink.ex {
		switch e.Kind {
		case KindNoResponse:
			if e.APIKey != 0 || e.ClientID != "capgen-kgo-acks0" {
				t.Errorf("no-response exchange %s from %q", protocol.APIName(e.APIKey), e.ClientID)
			}
		case KindUnanswered:
			if e.APIKey != 1 || !hasNote(e, "closed with no response") {
				t.Errorf("unanswered %s v%d notes %q", protocol.APIName(e.APIKey), e.APIVersion, e.Notes)
			}
		}
	}
}

func TestCaptureSASLAuthenticate(t *testing.T) {
	for _, name := range []string{"sasl-plain.pcap", "sasl-scram.pcap"} {
		r := dissectCapture(t, name)
		auth := 0
		for _, e := range r.sink.ex {
			if e.APIKey != 36 {
				continue
			}
			auth++
			wantMech := map[bool]string{true: "PLAIN", false: "SCRAM-SHA-"}[strings.Contains(name, "plain")]
			if !strings.HasPrefix(e.Mechanism, wantMech) {
				t.Errorf("%s: SaslAuthenticate exchange mechanism %q, want the handshake's %s…", name, e.Mechanism, wantMech)
			}
			// The bytes stay as captured; the tree marks the secret.
			if !bytes.Contains(e.Request.Bytes, []byte("capgen-")) {
				t.Errorf("%s: the request bytes were changed: %q", name, e.Request.Bytes)
			}
			if (strings.Contains(name, "plain") || bytes.Contains(e.Request.Bytes, []byte(",p="))) && !redacted(e.Request.Tree.Root) {
				t.Errorf("%s: no redacted node in the SaslAuthenticate request", name)
			}
			if bytes.Contains(e.Response.Bytes, []byte("v=")) && !redacted(e.Response.Tree.Root) {
				t.Errorf("%s: no redacted node in the SaslAuthenticate response (SCRAM server-final)", name)
			}
			if e.Request.Tree == nil || e.Request.Tree.Err != nil {
				t.Errorf("%s: SaslAuthenticate request: %v", name, e.Request.Tree.Err)
			}
		}
		if auth == 0 || r.sum.Paired != r.sum.Exchanges {
			t.Errorf("%s: %d SaslAuthenticate exchanges, summary %+v", name, auth, r.sum)
		}
	}
}

func redacted(n *protocol.Node) bool {
	if n == nil {
		return false
	}
	if n.Flags&protocol.FlagRedacted != 0 {
		return true
	}
	for _, c := range n.Children {
		if redacted(c) {
			return true
		}
	}
	return false
}

func TestCaptureSASLAuthenticateWithheldWithoutDecoding(t *testing.T) {
	loadCapture(t, "sasl-plain.pcap")
	r := dissectFileOpts(t, filepath.Join("..", "pcaps", "sasl-plain.pcap"),
		Options{Ports: capPorts, Decode: func(int16, int16) bool { return false }})
	auth := 0
	for _, e := range r.sink.ex {
		if e.APIKey == 36 {
			auth++
			if e.Request.Tree != nil || !e.Request.Withheld {
				t.Errorf("undecoded SaslAuthenticate request not withheld: tree %v, withheld %v", e.Request.Tree != nil, e.Request.Withheld)
			}
			if e.Response == nil || !e.Response.Withheld {
				t.Error("undecoded SaslAuthenticate response not withheld")
			}
		}
	}
	if auth == 0 {
		t.Fatal("no SaslAuthenticate exchange")
	}
}

// TestCaptureDetectMatchesPorts dissects every golden capture twice: by
// broker port, and with no port but Detect. Detection must find the same
// Kafka connections, clients and exchanges (TLS is skipped, not Kafka).
func TestCaptureDetectMatchesPorts(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "pcaps", "*.pcap"))
	if len(files) == 0 {
		t.Skip("../pcaps has no captures (make pcaps)")
	}
	for _, f := range files {
		keys := captureKeys(t, f)
		byPort := dissectFileOpts(t, f, Options{Ports: capPorts, TLSKeys: keys})
		detected := dissectFileOpts(t, f, Options{Ports: []uint16{}, Detect: true, TLSKeys: keys})
		if strings.Contains(f, "tls") && keys == nil {
			if detected.sum.Kafka != 0 || detected.sum.Skipped != byPort.sum.TLS {
				t.Errorf("%s: detect summary %+v", f, detected.sum)
			}
			continue
		}
		// A TLS connection that carried no data is Kafka on a Kafka port,
		// and nothing elsewhere.
		empty := 0
		for _, r := range detected.sum.SkipReasons {
			if r.Reason == "TLS without data" {
				empty += r.Count
			}
		}
		if detected.sum.Kafka+empty != byPort.sum.Kafka || detected.sum.Skipped != empty {
			t.Errorf("%s: detected %d Kafka connections (%d skipped), by port %d", f, detected.sum.Kafka, detected.sum.Skipped, byPort.sum.Kafka)
		}
		if err := sameExchanges(byPort, detected); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}
