package stats_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/snappy"
	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/dissect/stats"
	"github.com/kwire/kwire/pcaps"
	"github.com/kwire/kwire/protocol"
	"github.com/kwire/kwire/reassembly"
	"github.com/kwire/kwire/render/statsview"
	"github.com/kwire/kwire/tlsdec"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// End-to-end tests over the golden captures in ../../pcaps: golden text
// and JSON outputs (rewritten with -update), and the numbers checked
// against an independent walk of the capture (a minimal pcap reader and
// franz-go's kmsg decoders, sharing no code with kwire's pipeline).

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

type capture struct {
	file  string
	ports []uint16
	tls   bool // not Kafka frames on the wire: no independent walk
}

var captures = []capture{
	{file: "kgo-produce-consume.pcap", ports: []uint16{19092}},
	{file: "sarama-produce-consume.pcap", ports: []uint16{19093}},
	{file: "kafkago-produce-consume.pcap", ports: []uint16{19094}},
	{file: "kcat-produce-consume.pcap", ports: []uint16{19095}},
	{file: "kgo-large-value.pcap", ports: []uint16{19096}},
	{file: "mixed-versions.pcap", ports: []uint16{19097, 19098}},
	{file: "unsupported-versions.pcap", ports: []uint16{19099}},
	{file: "sasl-plain.pcap", ports: []uint16{19100}},
	{file: "sasl-scram.pcap", ports: []uint16{19101}},
	{file: "sasl-v0-raw.pcap", ports: []uint16{19102}},
	{file: "kgo-tls.pcap", ports: []uint16{19103}, tls: true},
	{file: "sarama-legacy-message-sets.pcap", ports: []uint16{19104}},
	// Decrypted with the key log beside it.
	{file: "kgo-tls13.pcap", ports: []uint16{19310}, tls: true},
}

func pcapPath(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join("..", "..", "pcaps", name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("golden capture %s not present: %v", name, err)
	}
	return p
}

type tee []dissect.Sink

func (t tee) Exchange(x *dissect.Exchange) {
	for _, s := range t {
		s.Exchange(x)
	}
}

func (t tee) Event(e *dissect.Event) {
	for _, s := range t {
		s.Event(e)
	}
}

// run dissects one capture into a Collector (top 5) and a VersionCollector.
func run(t *testing.T, c capture) (*stats.Report, *stats.VersionsReport) {
	t.Helper()
	col := stats.NewCollector(stats.Options{Top: 5})
	ver := stats.NewVersionCollector()
	opts := dissect.Options{Ports: c.ports, Decoder: protocol.Decoder{Records: true}}
	if kl, ok := pcaps.KeyLog(pcapPath(t, c.file)); ok {
		b, err := os.ReadFile(kl)
		if err != nil {
			t.Fatal(err)
		}
		keys := &tlsdec.KeyLog{}
		keys.Write(b)
		opts.TLSKeys = keys
	}
	d := dissect.New(opts, tee{col, ver})
	if _, err := reassembly.ReadFiles(context.Background(), []string{pcapPath(t, c.file)}, reassembly.Options{}, d); err != nil {
		t.Fatalf("reading %s: %v", c.file, err)
	}
	d.Finish()
	return col.Report(), ver.Report()
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("%s differs at line %d:\n got %q\nwant %q\n(go test -update rewrites it)", name, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%s differs in length: %d lines, want %d (go test -update rewrites it)", name, len(gl), len(wl))
	}
}

func TestGolden(t *testing.T) {
	for _, c := range captures {
		t.Run(c.file, func(t *testing.T) {
			rep, vrep := run(t, c)
			base := strings.TrimSuffix(c.file, ".pcap")
			var b bytes.Buffer
			if err := statsview.WriteStats(&b, &statsview.StatsDoc{Report: *rep}, statsview.Options{}); err != nil {
				t.Fatal(err)
			}
			golden(t, base+".stats.txt", b.Bytes())
			b.Reset()
			if err := statsview.WriteStatsJSON(&b, &statsview.StatsDoc{Report: *rep}, statsview.Options{}); err != nil {
				t.Fatal(err)
			}
			golden(t, base+".stats.json", b.Bytes())
			b.Reset()
			if err := statsview.WriteVersions(&b, vrep, statsview.Options{}); err != nil {
				t.Fatal(err)
			}
			golden(t, base+".versions.txt", b.Bytes())

			// Deterministic: a second run gives the same bytes.
			rep2, vrep2 := run(t, c)
			if !reflect.DeepEqual(rep, rep2) || !reflect.DeepEqual(vrep, vrep2) {
				t.Error("two runs over the same capture differ")
			}
		})
	}
}

// ---- the independent walk ----

type flowKey struct {
	src, dst [6]byte // IPv4 address and port
}

type flow struct {
	next    uint32
	started bool
	data    []byte
}

// readStreams reads a classic pcap of Ethernet/IPv4/TCP packets and
// returns each direction's payload bytes in sequence order (loopback
// captures: no loss; retransmitted bytes are dropped).
func readStreams(t *testing.T, path string) (map[flowKey]*flow, []flowKey) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 24 {
		t.Fatal("short pcap")
	}
	var bo binary.ByteOrder = binary.LittleEndian
	switch binary.LittleEndian.Uint32(b) {
	case 0xa1b2c3d4, 0xa1b23c4d:
	default:
		bo = binary.BigEndian
	}
	if bo.Uint32(b[20:]) != 1 {
		t.Skipf("link type %d, not Ethernet", bo.Uint32(b[20:]))
	}
	flows := map[flowKey]*flow{}
	var order []flowKey
	for off := 24; off+16 <= len(b); {
		incl := int(bo.Uint32(b[off+8:]))
		pkt := b[off+16 : min(off+16+incl, len(b))]
		off += 16 + incl
		if len(pkt) < 14+20 || binary.BigEndian.Uint16(pkt[12:]) != 0x0800 {
			continue
		}
		ip := pkt[14:]
		ihl := int(ip[0]&0x0f) * 4
		total := int(binary.BigEndian.Uint16(ip[2:]))
		if ip[9] != 6 || len(ip) < total || total < ihl+20 {
			continue
		}
		tcp := ip[ihl:total]
		doff := int(tcp[12]>>4) * 4
		if doff > len(tcp) {
			continue
		}
		var k flowKey
		copy(k.src[:4], ip[12:16])
		copy(k.src[4:], tcp[0:2])
		copy(k.dst[:4], ip[16:20])
		copy(k.dst[4:], tcp[2:4])
		f := flows[k]
		if f == nil {
			f = &flow{}
			flows[k] = f
			order = append(order, k)
		}
		seq := binary.BigEndian.Uint32(tcp[4:])
		payload := tcp[doff:]
		if tcp[13]&0x02 != 0 { // SYN
			f.next, f.started = seq+1, true
			continue
		}
		if !f.started {
			f.next, f.started = seq, true
		}
		if len(payload) == 0 {
			continue
		}
		d := int32(seq - f.next)
		if d < 0 { // starts before what we have: keep only the new tail
			if int(-d) >= len(payload) {
				continue
			}
			payload = payload[-d:]
		} else if d > 0 {
			t.Logf("%s: hole of %d bytes", path, d)
		}
		f.data = append(f.data, payload...)
		f.next += uint32(len(payload))
	}
	return flows, order
}

func frames(b []byte) [][]byte {
	var out [][]byte
	for len(b) >= 4 {
		n := int(binary.BigEndian.Uint32(b))
		if n < 0 || 4+n > len(b) {
			break
		}
		out = append(out, b[4:4+n])
		b = b[4+n:]
	}
	return out
}

type want struct {
	requests, responses map[[2]int16]int64
	errors              map[[2]int16]map[string]int64
	clients             map[string]bool
	software            map[string]bool
	produce, fetch      stats.FlowStats // batches, records, wire bytes
	recordsKnown        bool            // every legacy wrapper could be decompressed
}

func port(a [6]byte) uint16 { return binary.BigEndian.Uint16(a[4:]) }

// independent computes the expected numbers from the raw capture.
func independent(t *testing.T, c capture) *want {
	flows, order := readStreams(t, pcapPath(t, c.file))
	w := &want{requests: map[[2]int16]int64{}, responses: map[[2]int16]int64{},
		errors: map[[2]int16]map[string]int64{}, clients: map[string]bool{}, software: map[string]bool{},
		recordsKnown: true}
	for _, k := range order {
		if !slices.Contains(c.ports, port(k.dst)) {
			continue
		}
		back := flows[flowKey{k.dst, k.src}]
		type pend struct{ key, ver int16 }
		pending := map[int32]pend{}
		saslRaw := false
		for _, f := range frames(flows[k].data) {
			if saslRaw { // the PLAIN token after SaslHandshake v0: one raw frame
				saslRaw = false
				continue
			}
			if len(f) < 10 {
				continue
			}
			key, ver := int16(binary.BigEndian.Uint16(f)), int16(binary.BigEndian.Uint16(f[2:]))
			corr := int32(binary.BigEndian.Uint32(f[4:]))
			idLen := int(int16(binary.BigEndian.Uint16(f[8:])))
			body := f[10:]
			if idLen > 0 && idLen <= len(body) {
				w.clients[string(body[:idLen])] = true
				body = body[idLen:]
			} else if idLen == 0 {
				w.clients[""] = true
			}
			w.requests[[2]int16{key, ver}]++
			pending[corr] = pend{key, ver}
			req := kmsg.RequestForKey(key)
			if req == nil {
				continue
			}
			req.SetVersion(ver)
			if req.IsFlexible() && len(body) > 0 {
				body = body[1:] // an empty header tag buffer
			}
			switch r := req.(type) {
			case *kmsg.ApiVersionsRequest:
				if r.ReadFrom(body) == nil && r.ClientSoftwareName != "" {
					w.software[r.ClientSoftwareName+"/"+r.ClientSoftwareVersion] = true
				}
			case *kmsg.ProduceRequest:
				if r.ReadFrom(body) == nil {
					for _, tp := range r.Topics {
						for _, p := range tp.Partitions {
							w.recordsKnown = countBatches(&w.produce, p.Records) && w.recordsKnown
						}
					}
				}
			case *kmsg.SASLHandshakeRequest:
				saslRaw = ver == 0 // a raw SASL token follows (not a Kafka frame)
			}
		}
		if back == nil {
			continue
		}
		for _, f := range frames(back.data) {
			if len(f) < 4 {
				continue
			}
			p, ok := pending[int32(binary.BigEndian.Uint32(f))]
			if !ok {
				continue
			}
			delete(pending, int32(binary.BigEndian.Uint32(f)))
			kv := [2]int16{p.key, p.ver}
			w.responses[kv]++
			req := kmsg.RequestForKey(p.key)
			if req == nil {
				continue
			}
			req.SetVersion(p.ver)
			body := f[4:]
			rv := p.ver
			if p.key == 18 {
				if len(body) >= 2 && binary.BigEndian.Uint16(body) == 35 {
					rv = 0 // KIP-511: a v0 body
				}
			} else if req.IsFlexible() && len(body) > 0 {
				body = body[1:]
			}
			resp := req.ResponseKind()
			resp.SetVersion(rv)
			if resp.ReadFrom(body) != nil {
				continue
			}
			walkErrors(reflect.ValueOf(resp), func(code int16) {
				if w.errors[kv] == nil {
					w.errors[kv] = map[string]int64{}
				}
				w.errors[kv][protocol.KafkaErrorName(code)]++
			})
			if fr, ok := resp.(*kmsg.FetchResponse); ok {
				for _, tp := range fr.Topics {
					for _, pt := range tp.Partitions {
						w.recordsKnown = countBatches(&w.fetch, pt.RecordBatches) && w.recordsKnown
					}
				}
			}
		}
	}
	return w
}

// countBatches counts whole record batches (magic 2) and legacy messages
// (magic 0/1: one record each, or the inner messages of a compressed
// wrapper, decompressed here with the codec libraries directly). ok is
// false when a wrapper could not be decompressed (records then unknown).
func countBatches(f *stats.FlowStats, b []byte) (ok bool) {
	ok = true
	for len(b) >= 17 {
		n := int(int32(binary.BigEndian.Uint32(b[8:])))
		if n < 0 || 12+n > len(b) {
			return ok
		}
		f.Batches++
		f.WireBytes += int64(12 + n)
		msg := b[:12+n]
		b = b[12+n:]
		if msg[16] == 2 {
			var rb kmsg.RecordBatch
			if rb.ReadFrom(msg) == nil {
				f.Records += int64(rb.NumRecords)
			}
			continue
		}
		inner, known := legacyRecords(msg)
		f.Records += inner
		ok = ok && known
	}
	return ok
}

// legacyRecords counts the records of one legacy message.
func legacyRecords(msg []byte) (int64, bool) {
	// Offset 8, MessageSize 4, Crc 4, Magic 1, Attributes 1, [Timestamp 8], Key, Value.
	magic, attrs := msg[16], msg[17]
	p := msg[18:]
	if magic == 1 {
		if len(p) < 8 {
			return 0, false
		}
		p = p[8:]
	}
	if attrs&7 == 0 {
		return 1, true
	}
	var val []byte
	for range 2 { // the key, then the value
		if len(p) < 4 {
			return 0, false
		}
		l := max(int(int32(binary.BigEndian.Uint32(p))), 0)
		if 4+l > len(p) {
			return 0, false
		}
		val, p = p[4:4+l], p[4+l:]
	}
	data, err := inflate(attrs&7, val)
	if err != nil {
		return 0, false
	}
	var n int64
	for len(data) >= 12 {
		size := int(int32(binary.BigEndian.Uint32(data[8:])))
		if size < 0 || 12+size > len(data) {
			break
		}
		n++
		data = data[12+size:]
	}
	return n, true
}

func inflate(codec byte, b []byte) ([]byte, error) {
	switch codec {
	case 1:
		r, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		return io.ReadAll(r)
	case 2:
		xerial := []byte("\x82SNAPPY\x00")
		if !bytes.HasPrefix(b, xerial) {
			return snappy.Decode(nil, b)
		}
		var out []byte
		for b = b[16:]; len(b) >= 4; {
			l := int(binary.BigEndian.Uint32(b))
			if 4+l > len(b) {
				return nil, io.ErrUnexpectedEOF
			}
			d, err := snappy.Decode(nil, b[4:4+l])
			if err != nil {
				return nil, err
			}
			out = append(out, d...)
			b = b[4+l:]
		}
		return out, nil
	case 3:
		return io.ReadAll(lz4.NewReader(bytes.NewReader(b)))
	}
	return nil, io.ErrUnexpectedEOF
}

// walkErrors calls fn for each non-zero int16 field whose name ends in
// ErrorCode, anywhere in v.
func walkErrors(v reflect.Value, fn func(int16)) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walkErrors(v.Elem(), fn)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if strings.HasSuffix(f.Name, "ErrorCode") && v.Field(i).Kind() == reflect.Int16 {
				if c := int16(v.Field(i).Int()); c != 0 {
					fn(c)
				}
				continue
			}
			if f.IsExported() {
				walkErrors(v.Field(i), fn)
			}
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		for i := range v.Len() {
			walkErrors(v.Index(i), fn)
		}
	}
}

func TestIndependentCounts(t *testing.T) {
	for _, c := range captures {
		t.Run(c.file, func(t *testing.T) {
			if c.tls {
				t.Skip("TLS: the independent walk reads plaintext Kafka only")
			}
			rep, _ := run(t, c)
			w := independent(t, c)
			got := map[[2]int16]int64{}
			gotResp := map[[2]int16]int64{}
			gotErr := map[[2]int16]map[string]int64{}
			for _, a := range rep.APIs {
				kv := [2]int16{a.Key, a.Version}
				got[kv], gotResp[kv] = a.Requests, a.Responses
				for _, e := range a.Errors {
					if gotErr[kv] == nil {
						gotErr[kv] = map[string]int64{}
					}
					gotErr[kv][e.Name] = e.Count
				}
			}
			if !reflect.DeepEqual(got, w.requests) {
				t.Errorf("requests per API and version:\n got %v\nwant %v", got, w.requests)
			}
			if !reflect.DeepEqual(gotResp, keepNonZero(w.responses, got)) {
				t.Errorf("responses per API and version:\n got %v\nwant %v", gotResp, w.responses)
			}
			if !reflect.DeepEqual(gotErr, w.errors) {
				t.Errorf("errors per API and version:\n got %v\nwant %v", gotErr, w.errors)
			}
			var clients []string
			software := map[string]bool{}
			for _, cl := range rep.Clients {
				clients = append(clients, *cl.ClientID)
				for _, s := range cl.Software {
					software[s] = true
				}
			}
			var wantClients []string
			for id := range w.clients {
				wantClients = append(wantClients, id)
			}
			slices.Sort(wantClients)
			if !reflect.DeepEqual(clients, wantClients) {
				t.Errorf("clients %q, want %q", clients, wantClients)
			}
			if !reflect.DeepEqual(software, w.software) {
				t.Errorf("software %v, want %v", software, w.software)
			}
			var produce, fetch stats.FlowStats
			for _, p := range rep.Partitions {
				produce.Batches += p.Produce.Batches
				produce.Records += p.Produce.Records
				produce.WireBytes += p.Produce.WireBytes
				fetch.Batches += p.Fetch.Batches
				fetch.Records += p.Fetch.Records
				fetch.WireBytes += p.Fetch.WireBytes
			}
			if !w.recordsKnown {
				t.Log("a legacy wrapper did not decompress here: records not compared")
				produce.Records, fetch.Records = w.produce.Records, w.fetch.Records
			}
			if produce != w.produce || fetch != w.fetch {
				t.Errorf("record batches: produce %+v fetch %+v, want %+v and %+v", produce, fetch, w.produce, w.fetch)
			}
		})
	}
}

// keepNonZero drops zero counts, for API versions that never got a
// response (Produce acks=0), as kwire's rows have Responses 0 there.
func keepNonZero(m map[[2]int16]int64, rows map[[2]int16]int64) map[[2]int16]int64 {
	out := map[[2]int16]int64{}
	for k := range rows {
		out[k] = m[k]
	}
	return out
}

func flagSet(r *stats.VersionsReport) map[stats.FlagKind][]stats.Flag {
	m := map[stats.FlagKind][]stats.Flag{}
	for _, f := range r.Flags {
		m[f.Kind] = append(m[f.Kind], f)
	}
	return m
}

func TestMixedVersionsFlags(t *testing.T) {
	_, v := run(t, capture{file: "mixed-versions.pcap", ports: []uint16{19097, 19098}})
	fs := flagSet(v)
	mixed := map[string]bool{}
	for _, f := range fs[stats.FlagMixed] {
		mixed[f.API] = true
	}
	// Its brokers are two clusters (capgen-newest and capgen-kafka-2.1,
	// by their Metadata responses' ClusterId): their different ranges
	// are no cluster mid-upgrade (TestVersionsMixedTwoClusters).
	if len(mixed) != 0 {
		t.Errorf("mixed-cluster flags across two clusters: %v", mixed)
	}
	if len(fs[stats.FlagDowngrade]) == 0 {
		t.Error("no KIP-511 downgrade flag")
	}
	for _, f := range fs[stats.FlagDowngrade] {
		if f.Broker != "127.0.0.1:19098" || f.Version != 2 {
			t.Errorf("downgrade %+v", f)
		}
	}
	if len(v.Brokers) != 2 {
		t.Fatalf("brokers %+v", v.Brokers)
	}
	// Every version used is inside its broker's range but for the
	// ApiVersions probes answered UNSUPPORTED_VERSION.
	for _, f := range fs[stats.FlagOutOfRange] {
		if f.Key != 18 {
			t.Errorf("unexpected out-of-range %+v", f)
		}
	}
}

func TestUnsupportedVersionsFlags(t *testing.T) {
	_, v := run(t, capture{file: "unsupported-versions.pcap", ports: []uint16{19099}})
	fs := flagSet(v)
	if d := fs[stats.FlagDowngrade]; len(d) != 1 || !strings.Contains(d[0].Detail, "ApiVersions v99") {
		t.Errorf("downgrade flags %+v", d)
	}
	if c := fs[stats.FlagClosedUnsupported]; len(c) != 1 || c[0].Key != 3 || c[0].Version != 99 {
		t.Errorf("closed-after-unknown flags %+v", c)
	}
	if len(fs[stats.FlagMixed]) != 0 {
		t.Errorf("one broker flagged mixed: %+v", fs[stats.FlagMixed])
	}
	if b := v.Brokers; len(b) != 1 || len(b[0].Advertisements) != 2 || b[0].Advertisements[0].Error != "UNSUPPORTED_VERSION" {
		t.Errorf("brokers %+v", b)
	}
}

// TestAgainstCaptures compares the single-broker kgo capture (before) with
// the mixed capture (after: one broker capped at Kafka 2.1, so what every
// broker accepts shrinks): the kgo clients' Produce v13 and Fetch v18 are
// lost.
func TestAgainstCaptures(t *testing.T) {
	_, before := run(t, captures[0])
	_, after := run(t, capture{file: "mixed-versions.pcap", ports: []uint16{19097, 19098}})
	cmp := stats.Compare(before, after)
	if cmp.BeforeBrokers != 1 || cmp.AfterBrokers != 2 {
		t.Fatalf("brokers %d, %d", cmp.BeforeBrokers, cmp.AfterBrokers)
	}
	moved := map[string]stats.RangeChange{}
	for _, r := range cmp.Ranges {
		moved[r.API] = r
	}
	// The after cluster accepts only the capped broker's ranges.
	capped := map[int16]stats.Range{}
	for _, b := range after.Brokers {
		if b.Broker == "127.0.0.1:19098" {
			for _, r := range b.Advertisements[b.Effective].Ranges {
				capped[r.Key] = r
			}
		}
	}
	if p := moved["Produce"]; p.After == nil || *p.After != capped[0] || p.Before == nil || p.Before.Max != 13 {
		t.Errorf("Produce change %+v, capped %+v", p, capped[0])
	}
	lost := map[string]bool{}
	for _, l := range cmp.Lost {
		lost[*l.ClientID+" "+l.API] = true
		for _, v := range l.Versions {
			if l.After != nil && v >= l.After.Min && v <= l.After.Max {
				t.Errorf("%+v: v%d is inside the after range", l, v)
			}
		}
	}
	for _, want := range []string{"capgen-kgo-gzip Produce", "capgen-kgo-group Fetch", "capgen-kgo-848 ConsumerGroupHeartbeat"} {
		if !lost[want] {
			t.Errorf("%s not lost: %v", want, lost)
		}
	}
}
