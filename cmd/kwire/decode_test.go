package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sharedDir returns Kafka's vectors and schemas directory: $KWIRE_SHARED,
// else ../shared beside the module root; the test skips without it.
func sharedDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("KWIRE_SHARED")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared")
	}
	if _, err := os.Stat(filepath.Join(dir, "kafka-vectors")); err != nil {
		t.Skipf("Kafka's vectors not found in %s (set KWIRE_SHARED): %v", dir, err)
	}
	return dir
}

// Record batches written by Kafka's MemoryRecordsBuilder decode through
// `kwire decode --type RecordBatch`, and the value flags reach the output.
func TestDecodeRecordBatchVectors(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(sharedDir(t), "kafka-vectors", "records.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Vectors []struct{ Name, Hex string }
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Vectors) == 0 {
		t.Fatal("records.json holds no vectors")
	}
	for _, v := range file.Vectors {
		code, out, errOut := runWith(t, "", "decode", "--type", "RecordBatch", v.Hex)
		if code != exitOK || errOut != "" {
			t.Errorf("%s: exit %d, stderr %q", v.Name, code, errOut)
			continue
		}
		if !strings.Contains(out, "RecordBatch offset ") || !strings.Contains(out, "crc ok") {
			t.Errorf("%s: no checked batch in\n%s", v.Name, out)
		}
		code, out, _ = runWith(t, "", "decode", "--type", "RecordBatch", "--json", v.Hex)
		if code != exitOK || !json.Valid([]byte(out)) {
			t.Errorf("%s --json: exit %d, invalid JSON %q", v.Name, code, out)
		}
	}

	// one_record_no_key's value is "value-one".
	var hex string
	for _, v := range file.Vectors {
		if v.Name == "one_record_no_key" {
			hex = v.Hex
		}
	}
	if hex == "" {
		t.Fatal("vector one_record_no_key missing")
	}
	for _, tt := range []struct {
		flags []string
		want  string
	}{
		{nil, `Value: "value-one"`},
		{[]string{"--values=hex"}, "76616c75652d6f6e65"},
		{[]string{"--values=base64"}, "dmFsdWUtb25l"},
		{[]string{"--values=none"}, "Value: 9 bytes"},
	} {
		args := append([]string{"decode", "--type", "RecordBatch"}, tt.flags...)
		code, out, errOut := runWith(t, "", append(args, hex)...)
		if code != exitOK || !strings.Contains(out, tt.want) {
			t.Errorf("%v: exit %d (stderr %q), output lacks %q:\n%s", tt.flags, code, errOut, tt.want, out)
		}
	}
}

// A record batch whose CRC does not match decodes with exit status 1.
func TestDecodeRecordBatchBadCRC(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(sharedDir(t), "kafka-vectors", "records.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Vectors []struct{ Name, Hex string }
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	for _, v := range file.Vectors {
		if v.Name != "one_record_no_key" {
			continue
		}
		// The last bytes are the record's value and empty headers; change
		// a value byte so that the CRC no longer matches.
		bad := v.Hex[:len(v.Hex)-4] + "00" + v.Hex[len(v.Hex)-2:]
		code, out, errOut := runWith(t, "", "decode", "--type", "RecordBatch", bad)
		if code != exitData || !strings.Contains(errOut, "kwire: decode error: ") {
			t.Errorf("exit %d, stderr %q; want 1 and a decode error", code, errOut)
		}
		if !strings.Contains(out, "RecordBatch offset 0") {
			t.Errorf("the batch is not shown:\n%s", out)
		}
		return
	}
	t.Fatal("vector one_record_no_key missing")
}
