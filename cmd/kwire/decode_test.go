package main

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kwire/kwire/internal/connecttest"
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

// TestDecodeConnectMetadata: kwire decode --type ConnectProtocolMetadata
// decodes a worker's metadata and the assignment its allocation holds;
// the leader URL's userinfo there is withheld in the tree, -x and the
// JSON, and shown with --show-secrets.
func TestDecodeConnectMetadata(t *testing.T) {
	const pw = "Kx-DECODE-CONNECT-71"
	a := connecttest.Assignment{Version: 1, Leader: "w1", LeaderURL: "http://u:" + pw + "@w1:8083/", ConfigOffset: 42,
		Assigned: []connecttest.Connector{{Name: "pg", Tasks: []int32{-1, 0}}}, NullRevoked: true, Delay: 5000}
	h := hex.EncodeToString(connecttest.Metadata(2, "http://w2:8083/", 19, a.Bytes()))
	for _, flags := range [][]string{nil, {"-x"}, {"--json"}, {"--show-secrets"}} {
		args := append([]string{"decode", "--type", "ConnectProtocolMetadata"}, flags...)
		code, out, errOut := runWith(t, "", append(args, h)...)
		if code != exitOK || errOut != "" {
			t.Fatalf("%v: exit %d, stderr %q", flags, code, errOut)
		}
		show := len(flags) > 0 && flags[0] == "--show-secrets"
		if strings.Contains(out, pw) != show {
			t.Errorf("%v: password shown %v:\n%s", flags, !show, out)
		}
		if !strings.Contains(out, "http://w2:8083/") || len(flags) == 0 && !strings.Contains(out, `Connector: "pg"`) {
			t.Errorf("%v: output lacks the URL or the allocation's connector:\n%s", flags, out)
		}
	}
}
