package tlsdec

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

func TestKeyLogParse(t *testing.T) {
	cr1 := strings.Repeat("ab", 32)
	cr2 := strings.Repeat("0c", 32)
	ms := strings.Repeat("11", 48)
	sec := strings.Repeat("22", 32)
	log := "# a comment\n\n" +
		"CLIENT_RANDOM " + cr1 + " " + ms + "\r\n" +
		"CLIENT_HANDSHAKE_TRAFFIC_SECRET " + cr2 + " " + sec + "\n" +
		"SERVER_HANDSHAKE_TRAFFIC_SECRET " + cr2 + " " + strings.Repeat("33", 32) + "\n" +
		"CLIENT_TRAFFIC_SECRET_0 " + cr2 + " " + strings.Repeat("44", 48) + "\n" +
		"SERVER_TRAFFIC_SECRET_0 " + cr2 + " " + strings.Repeat("55", 48) + "\n" +
		"EXPORTER_SECRET " + cr2 + " " + sec + "\n" + // unknown to kwire: skipped
		"CLIENT_RANDOM " + cr1[:10] + " " + ms + "\n" + // short random
		"CLIENT_RANDOM " + cr1 + " " + ms[:20] + "\n" + // short master secret
		"CLIENT_RANDOM " + cr1 + "\n" + // two fields
		"client_random " + cr1 + " " + ms + "\n" + // not a label
		"CLIENT_RANDOM " + strings.Repeat("zz", 32) + " " + ms + "\n" // not hex
	var k KeyLog
	// Written in odd pieces, as a growing file is read.
	for b := []byte(log); len(b) > 0; {
		n := min(len(b), 7)
		k.Write(b[:n])
		b = b[n:]
	}
	if k.Len() != 2 {
		t.Fatalf("Len = %d, want 2", k.Len())
	}
	lines, bad := k.Lines()
	if lines != 11 || bad != 5 {
		t.Errorf("Lines = %d, %d malformed; want 11, 5", lines, bad)
	}
	s, ok := k.Lookup([32]byte(mustHex(cr1)))
	if !ok || hex.EncodeToString(s.Master) != ms || s.tls13() {
		t.Errorf("cr1: %+v %v", s, ok)
	}
	s, ok = k.Lookup([32]byte(mustHex(cr2)))
	if !ok || hex.EncodeToString(s.ClientHandshake) != sec || len(s.ServerTraffic) != 48 || s.Master != nil {
		t.Errorf("cr2: %+v %v", s, ok)
	}
	if _, ok := k.Lookup([32]byte{}); ok {
		t.Error("Lookup of an unknown random succeeded")
	}
}

func TestKeyLogLongLineAndFlush(t *testing.T) {
	var k KeyLog
	k.Write(bytes.Repeat([]byte("A"), 10000)) // a hostile line without a newline: not kept
	if len(k.partial) != 0 {
		t.Errorf("kept %d bytes of an overlong line", len(k.partial))
	}
	k.Write([]byte("\nCLIENT_RANDOM " + strings.Repeat("ab", 32) + " " + strings.Repeat("11", 48)))
	if k.Len() != 0 {
		t.Fatal("an unfinished line was taken")
	}
	k.Flush()
	if k.Len() != 1 {
		t.Error("Flush did not take the last line")
	}
	if _, bad := k.Lines(); bad != 1 {
		t.Errorf("malformed = %d, want 1 (the long line)", bad)
	}
	if err := k.AddLine([]byte("CLIENT_RANDOM xyz 00")); err == nil {
		t.Error("AddLine accepted a bad line")
	}
}

func mustHex(s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		panic(err)
	}
	return b
}

// keyLogLines returns n key log lines for the client randoms from..from+n-1:
// a CLIENT_RANDOM line each, or (tls13) the four TLS 1.3 traffic secrets.
func keyLogLines(from, n int, tls13 bool) []byte {
	var b bytes.Buffer
	for i := from; i < from+n; i++ {
		cr := fmt.Sprintf("%064x", i)
		if !tls13 {
			fmt.Fprintf(&b, "CLIENT_RANDOM %s %s\n", cr, strings.Repeat("11", 48))
			continue
		}
		for _, l := range []string{"CLIENT_HANDSHAKE_TRAFFIC_SECRET", "SERVER_HANDSHAKE_TRAFFIC_SECRET", "CLIENT_TRAFFIC_SECRET_0", "SERVER_TRAFFIC_SECRET_0"} {
			fmt.Fprintf(&b, "%s %s %s\n", l, cr, strings.Repeat("22", 48))
		}
	}
	return b.Bytes()
}

func clientRandom(i int) (cr [32]byte) {
	binary.BigEndian.PutUint64(cr[24:], uint64(i))
	return cr
}

// TestKeyLogCost: what a client random costs the heap is within what
// MaxBytes counts for it (KeyCost plus its secrets' bytes).
func TestKeyLogCost(t *testing.T) {
	for _, tls13 := range []bool{false, true} {
		const n = 40000
		secrets := 48
		if tls13 {
			secrets = 4 * 48
		}
		lines := keyLogLines(0, n, tls13)
		var k KeyLog
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		k.Write(lines)
		runtime.GC()
		runtime.ReadMemStats(&after)
		if k.Len() != n {
			t.Fatalf("tls13=%v: Len = %d, want %d", tls13, k.Len(), n)
		}
		runtime.KeepAlive(lines)
		per := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / n
		if limit := float64(KeyCost + secrets); per > limit {
			t.Errorf("tls13=%v: a client random takes %.0f bytes of heap, past the %.0f MaxBytes counts", tls13, per, limit)
		}
		t.Logf("tls13=%v: %.0f bytes a client random (counted: %d)", tls13, per, KeyCost+secrets)
		runtime.KeepAlive(&k)
	}
}

// TestKeyLogBounded: past MaxBytes the client randoms added first are
// dropped and counted; the newest stay, and a random's further secrets or
// a repeated line drop nothing.
func TestKeyLogBounded(t *testing.T) {
	const keep = 100
	k := KeyLog{MaxBytes: keep * (KeyCost + 48)}
	k.Write(keyLogLines(0, 1000, false))
	if k.Len() != keep || k.Dropped() != 900 {
		t.Fatalf("Len, Dropped = %d, %d; want %d, 900", k.Len(), k.Dropped(), keep)
	}
	for _, i := range []int{0, 1, 899} {
		if _, ok := k.Lookup(clientRandom(i)); ok {
			t.Errorf("client random %d (of the first 900) still kept", i)
		}
	}
	for _, i := range []int{900, 950, 999} {
		if s, ok := k.Lookup(clientRandom(i)); !ok || len(s.Master) != 48 || s.Master[0] != 0x11 {
			t.Errorf("client random %d: %v %x, want its master secret", i, ok, s.Master)
		}
	}
	// The same lines again: nothing new, nothing dropped.
	k.Write(keyLogLines(900, 100, false))
	if k.Len() != keep || k.Dropped() != 900 {
		t.Errorf("after repeated lines: Len, Dropped = %d, %d; want %d, 900", k.Len(), k.Dropped(), keep)
	}
	if lines, bad := k.Lines(); lines != 1100 || bad != 0 {
		t.Errorf("Lines = %d, %d; want 1100, 0", lines, bad)
	}

	// TLS 1.3: four secrets a random, the bound holds the newest whole.
	k13 := KeyLog{MaxBytes: 10 * (KeyCost + 4*48)}
	k13.Write(keyLogLines(0, 50, true))
	if k13.Len() != 10 || k13.Dropped() != 40 {
		t.Fatalf("TLS 1.3: Len, Dropped = %d, %d; want 10, 40", k13.Len(), k13.Dropped())
	}
	if s, ok := k13.Lookup(clientRandom(49)); !ok || len(s.ClientHandshake) != 48 || len(s.ServerTraffic) != 48 {
		t.Errorf("TLS 1.3 client random 49: %v, want all four secrets", ok)
	}

	// Many more than fit: the order is compacted, the heap stays bounded.
	kb := KeyLog{MaxBytes: 1000 * (KeyCost + 48)}
	for i := 0; i < 100; i++ {
		kb.Write(keyLogLines(i*2000, 2000, false))
	}
	if kb.Len() != 1000 || kb.Dropped() != 199000 || len(kb.order)-kb.head != 1000 || cap(kb.order) > 4*2048 {
		t.Errorf("200,000 randoms: Len %d, Dropped %d, order %d (head %d, cap %d); want 1000, 199000, 1000, cap ≤ 8192",
			kb.Len(), kb.Dropped(), len(kb.order)-kb.head, kb.head, cap(kb.order))
	}
}

// TestKeyLogBOM: a UTF-8 byte order mark before a line (a key log saved
// by a Windows editor, at the start of each file appended) is not part of
// its label.
func TestKeyLogBOM(t *testing.T) {
	var k KeyLog
	k.Write([]byte("\ufeffCLIENT_RANDOM " + fmt.Sprintf("%064x", 1) + " " + strings.Repeat("11", 48) + "\r\n" +
		"\ufeff# a comment\n" + "CLIENT_RANDOM " + fmt.Sprintf("%064x", 2) + " " + strings.Repeat("22", 48) + "\n"))
	if lines, bad := k.Lines(); lines != 2 || bad != 0 || k.Len() != 2 {
		t.Fatalf("lines %d, malformed %d, keys %d; want 2, 0, 2", lines, bad, k.Len())
	}
	if s, ok := k.Lookup(clientRandom(1)); !ok || s.Master[0] != 0x11 {
		t.Errorf("the line after the mark: %v %x", ok, s.Master)
	}
}
