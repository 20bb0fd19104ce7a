package pcaps

// The TLS golden captures (a key log beside them, or a pcapng with its
// keys inside) against tshark decrypting them with the same keys: every
// Kafka request tshark decodes must be an exchange of kwire's on the same
// tcp.stream with the same correlation ID, API key and version, and every
// response tshark decodes must be paired with it by kwire. Skipped when
// tshark is not on PATH.

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// encrypted tells the TLS captures kwire decrypts: those with a key log
// beside them and the pcapng files (their keys are inside).
func encrypted(capture string) bool {
	_, ok := KeyLog(capture)
	return ok || strings.HasSuffix(capture, ".pcapng")
}

// tsMsg is a Kafka message tshark decoded.
type tsMsg struct {
	stream  int
	request bool
	corr    int32
	key     int
	version int
	frame   int
}

func TestTLSAgainstWireshark(t *testing.T) {
	tshark, err := exec.LookPath("tshark")
	if err != nil {
		t.Skip("tshark is not on PATH (apt-get install tshark): the TLS captures are not checked against Wireshark's decryption")
	}
	n := 0
	for _, c := range captures(t) {
		if !encrypted(c) {
			continue
		}
		n++
		t.Run(c, func(t *testing.T) {
			ports := info(t, c).ports
			msgs := tsharkKafka(t, tshark, c, ports)
			res := kwire(t, readArgs(t, c, mode{"json", []string{"--json"}})...)
			type k struct {
				stream int
				corr   int32
			}
			kw := map[k]*kwireDoc{}
			for _, line := range bytes.Split(res.stdout, []byte("\n")) {
				if len(line) == 0 {
					continue
				}
				d := &kwireDoc{}
				if err := json.Unmarshal(line, d); err != nil {
					t.Fatal(err)
				}
				if d.Request != nil {
					kw[k{d.Stream, d.CorrelationID}] = d
				}
			}
			reqs, resps := 0, 0
			for _, m := range msgs {
				d := kw[k{m.stream, m.corr}]
				switch {
				case d == nil:
					t.Errorf("tshark's %s in frame %d (stream %d, correlation ID %d) is not in kwire's output", role(m), m.frame, m.stream, m.corr)
				case m.request && (int(d.APIKey) != m.key || int(d.APIVersion) != m.version):
					t.Errorf("frame %d: tshark reads API key %d v%d, kwire %d v%d", m.frame, m.key, m.version, d.APIKey, d.APIVersion)
				case m.request:
					reqs++
				case d.Kind != "paired" || d.Response == nil:
					t.Errorf("frame %d: tshark's response to correlation ID %d on stream %d is not paired by kwire (%s)", m.frame, m.corr, m.stream, d.Kind)
				default:
					resps++
				}
			}
			if reqs == 0 || resps == 0 {
				t.Errorf("tshark decoded %d requests and %d responses", reqs, resps)
			}
			t.Logf("%d requests and %d responses tshark decrypted and decoded, all paired by kwire alike", reqs, resps)
		})
	}
	if n == 0 {
		t.Skip("no encrypted captures")
	}
}

func role(m tsMsg) string {
	if m.request {
		return "request"
	}
	return "response"
}

// tsharkKafka runs tshark over a TLS capture with its keys and returns the
// Kafka messages it decodes.
func tsharkKafka(t *testing.T, tshark, capture, ports string) []tsMsg {
	t.Helper()
	args := append([]string{"-r", capture, "-n", "-Y", "kafka", "-T", "fields", "-E", "separator=/t", "-E", "aggregator=,"},
		tsharkDecodeAs(capture, ports)...)
	for _, f := range []string{"frame.number", "tcp.stream", "tcp.dstport", "kafka.correlation_id", "kafka.request_key", "kafka.api_version"} {
		args = append(args, "-e", f)
	}
	out, err := exec.Command(tshark, args...).Output()
	if err != nil {
		t.Fatalf("tshark %s: %v", strings.Join(args, " "), err)
	}
	isPort := map[string]bool{}
	for _, p := range strings.Split(ports, ",") {
		isPort[p] = true
	}
	var msgs []tsMsg
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 6 || f[3] == "" {
			continue
		}
		frame, _ := strconv.Atoi(f[0])
		stream, _ := strconv.Atoi(f[1])
		corrs := strings.Split(f[3], ",")
		keys := strings.Split(f[4], ",")
		vers := strings.Split(f[5], ",")
		req := isPort[f[2]]
		for i, cs := range corrs {
			corr, err := strconv.ParseInt(cs, 10, 32)
			if err != nil {
				t.Fatalf("tshark line %q: %v", line, err)
			}
			m := tsMsg{stream: stream, request: req, corr: int32(corr), frame: frame}
			if req {
				if i >= len(keys) || i >= len(vers) {
					t.Fatalf("tshark line %q: a request without its key or version", line)
				}
				m.key, _ = strconv.Atoi(keys[i])
				m.version, _ = strconv.Atoi(vers[i])
			}
			msgs = append(msgs, m)
		}
	}
	return msgs
}
