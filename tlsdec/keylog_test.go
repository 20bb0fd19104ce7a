package tlsdec

import (
	"bytes"
	"encoding/hex"
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
