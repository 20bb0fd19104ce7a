package dissect

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kwire/kwire/pcaps"
	"github.com/kwire/kwire/tlsdec"
)

// captureKeys loads the key log beside a golden capture, nil when it has
// none.
func captureKeys(t *testing.T, capture string) tlsdec.Keys {
	t.Helper()
	p, ok := pcaps.KeyLog(capture)
	if !ok {
		return nil
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	kl := &tlsdec.KeyLog{}
	kl.Write(b)
	kl.Flush()
	return kl
}

// tlsCaptures are the golden captures with a key log beside them.
func tlsCaptures(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join("..", "pcaps", "*.pcap"))
	var out []string
	for _, f := range files {
		if _, ok := pcaps.KeyLog(f); ok {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		t.Skip("no TLS captures with key logs in ../pcaps (make pcaps)")
	}
	return out
}

// TestTLSCaptures: with their key logs, every connection of the TLS
// golden captures is decrypted and dissected cleanly, on the broker port
// and by content alike, and the exchanges say they were decrypted.
func TestTLSCaptures(t *testing.T) {
	for _, f := range tlsCaptures(t) {
		r := dissectFileOpts(t, f, Options{Ports: capPorts, TLSKeys: captureKeys(t, f)})
		s := r.sum
		if s.TLS == 0 || s.TLSDecrypted != s.TLS || s.Kafka != s.Connections || len(s.TLSReasons) != 0 {
			t.Errorf("%s: %d connections, %d Kafka, %d TLS, %d decrypted, reasons %v", f, s.Connections, s.Kafka, s.TLS, s.TLSDecrypted, s.TLSReasons)
		}
		if s.Gaps+s.Resyncs+s.BadFrames+s.Truncated+s.DecodeErrors != 0 || s.Paired == 0 {
			t.Errorf("%s: %+v", f, s)
		}
		for _, ex := range r.sink.ex {
			if !ex.TLS {
				t.Errorf("%s: exchange %d not marked as decrypted", f, ex.CorrelationID)
				break
			}
		}
		for _, ev := range r.sink.events(EventTLS) {
			if ev.TLS == nil || !ev.TLS.Decrypted || ev.TLS.Version == "" || ev.TLS.Suite == "" || !strings.HasPrefix(ev.Detail, "decrypted: TLS 1.") {
				t.Errorf("%s: %+v %+v", f, ev, ev.TLS)
			}
		}
	}
}

// TestTLSMissingKey: a key log without one connection's lines: that
// connection is reported (no key, how many keys were loaded), the others
// decode as with the whole key log.
func TestTLSMissingKey(t *testing.T) {
	f := filepath.Join("..", "pcaps", "kgo-tls13.pcap")
	p, ok := pcaps.KeyLog(f)
	if !ok {
		t.Skip("no kgo-tls13.pcap key log (make pcaps)")
	}
	b, _ := os.ReadFile(p)
	full := &tlsdec.KeyLog{}
	full.Write(b)
	all := dissectFileOpts(t, f, Options{Ports: capPorts, TLSKeys: full})
	// Drop the lines of the third connection's client random.
	randoms := []string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if fs := strings.Fields(sc.Text()); len(fs) == 3 && !contains(randoms, fs[1]) {
			randoms = append(randoms, fs[1])
		}
	}
	drop := randoms[2]
	var kept bytes.Buffer
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if !strings.Contains(l, drop) {
			kept.WriteString(l)
		}
	}
	part := &tlsdec.KeyLog{}
	part.Write(kept.Bytes())
	r := dissectFileOpts(t, f, Options{Ports: capPorts, TLSKeys: part})
	var missing []*Event
	for _, ev := range r.sink.events(EventTLS) {
		if !ev.TLS.Decrypted {
			missing = append(missing, ev)
		}
	}
	if len(missing) != 1 || missing[0].TLS.Reason != TLSNoKey ||
		!strings.Contains(missing[0].Detail, "("+strconv.Itoa(part.Len())+" keys loaded)") || !strings.Contains(missing[0].Detail, drop[:8]) {
		t.Fatalf("not decrypted: %+v", missing)
	}
	lost := missing[0].Conn.Index
	want := 0
	for _, ex := range all.sink.ex {
		if ex.Conn.Index != lost {
			want++
		}
	}
	if len(r.sink.ex) != want || want == len(all.sink.ex) {
		t.Errorf("%d exchanges, want %d (of %d)", len(r.sink.ex), want, len(all.sink.ex))
	}
	if s := r.sum; s.TLS != all.sum.TLS || s.TLSDecrypted != s.TLS-1 || len(s.TLSReasons) != 1 {
		t.Errorf("summary %+v", s)
	}
}

// TestTLSWrongKey: a key log whose secrets for one connection are wrong:
// that connection says so, nothing of it is shown, the others decode.
func TestTLSWrongKey(t *testing.T) {
	f := filepath.Join("..", "pcaps", "kgo-tls12.pcap")
	p, ok := pcaps.KeyLog(f)
	if !ok {
		t.Skip("no kgo-tls12.pcap key log (make pcaps)")
	}
	b, _ := os.ReadFile(p)
	// The master secret's first hex digit changed.
	i := bytes.LastIndexByte(bytes.TrimSpace(b), ' ') + 1
	bad := bytes.Clone(b)
	bad[i] = '0'
	if b[i] == '0' {
		bad[i] = '1'
	}
	kl := &tlsdec.KeyLog{}
	kl.Write(bad)
	r := dissectFileOpts(t, f, Options{Ports: capPorts, TLSKeys: kl})
	// The other connections resume that session: none decrypts (they
	// have no key of their own).
	for _, ev := range r.sink.events(EventTLS) {
		if ev.TLS.Decrypted {
			t.Errorf("decrypted with a wrong key: %+v", ev)
		}
	}
	if tls := r.sink.events(EventTLS); len(r.sink.ex) != 0 || len(tls) == 0 || tls[0].TLS.Reason != TLSWrongKey {
		t.Errorf("%d exchanges, reasons %v", len(r.sink.ex), r.sum.TLSReasons)
	}
}

func contains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}
