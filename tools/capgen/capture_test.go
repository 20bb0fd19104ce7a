package main

import (
	"errors"
	"hash/crc32"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestCheckCounts(t *testing.T) {
	for _, tc := range []struct {
		name     string
		summary  string
		loopback bool
		bad      bool
	}{
		{"complete loopback", "132 packets captured\n264 packets received by filter\n0 packets dropped by kernel\n", true, false},
		{"kernel drops", "132 packets captured\n264 packets received by filter\n3 packets dropped by kernel\n", true, true},
		{"unread ring", "33 packets captured\n264 packets received by filter\n0 packets dropped by kernel\n", true, true},
		{"unread ring, not loopback", "33 packets captured\n264 packets received by filter\n0 packets dropped by kernel\n", false, false},
		{"one packet", "1 packet captured\n2 packets received by filter\n0 packets dropped by kernel\n", true, false},
	} {
		err := checkCounts(tc.summary, tc.loopback)
		if got := errors.Is(err, errDropped); got != tc.bad {
			t.Errorf("%s: checkCounts = %v, want incomplete %v", tc.name, err, tc.bad)
		}
	}
}

func TestRawBatchCRC(t *testing.T) {
	b := rawBatch(testTime, [2][]byte{[]byte("k"), nil}, [2][]byte{nil, []byte("v")})
	if got, want := int(b[8])<<24|int(b[9])<<16|int(b[10])<<8|int(b[11]), len(b)-12; got != want {
		t.Fatalf("batch length %d, want %d", got, want)
	}
	if b[16] != 2 {
		t.Fatalf("magic %d, want 2", b[16])
	}
	recs, err := batchRecords(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || string(recs[0].Key) != "k" || recs[0].Value != nil || recs[1].Key != nil || string(recs[1].Value) != "v" {
		t.Fatalf("records %+v", recs)
	}
}

func TestByteSize(t *testing.T) {
	for in, want := range map[string]int64{"300MB": 300e6, "64KiB": 64 << 10, "1000": 1000, "2gib": 2 << 30} {
		var b byteSize
		if err := b.Set(in); err != nil || int64(b) != want {
			t.Errorf("Set(%q) = %d, %v; want %d", in, b, err, want)
		}
	}
	var b byteSize
	if err := b.Set("-5MB"); err == nil {
		t.Error("Set(-5MB) succeeded")
	}
}

var testTime = time.UnixMilli(1700000000000)

// batchRecords checks the CRC of rawBatch's output and decodes its records
// with kmsg and kfake.
func batchRecords(b []byte) ([]kmsg.Record, error) {
	var rb kmsg.RecordBatch
	if err := rb.ReadFrom(b); err != nil {
		return nil, err
	}
	if crc32.Checksum(b[21:], castagnoli) != uint32(rb.CRC) {
		return nil, errors.New("crc mismatch")
	}
	return kfake.BatchRecords(rb)
}
