package stats

import (
	"fmt"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/reassembly"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// apiVersionsX builds an ApiVersions exchange of version ver answered with
// the given ranges ({key, min, max}) and error code.
func apiVersionsX(t *testing.T, c *reassembly.Conn, clientID string, ver int16, code int16, ranges [][3]int16, rf int64) *dissect.Exchange {
	t.Helper()
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = ver
	req.ClientSoftwareName, req.ClientSoftwareVersion = "testclient", "0.1"
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = ver
	if code == errUnsupportedVersion {
		resp.Version = 0 // KIP-511: the broker answers with a v0 body
	}
	resp.ErrorCode = code
	for _, r := range ranges {
		resp.ApiKeys = append(resp.ApiKeys, kmsg.ApiVersionsResponseApiKey{ApiKey: r[0], MinVersion: r[1], MaxVersion: r[2]})
	}
	if resp.Version >= 3 {
		resp.SupportedFeatures = []kmsg.ApiVersionsResponseSupportedFeature{{Name: "metadata.version", MinVersion: 1, MaxVersion: 21}}
		resp.FinalizedFeaturesEpoch = 7
		resp.FinalizedFeatures = []kmsg.ApiVersionsResponseFinalizedFeature{{Name: "metadata.version", MinVersionLevel: 20, MaxVersionLevel: 20}}
	}
	x := xchg(c, clientID, reqFrame(t, int32(rf), clientID, req), respFrame(t, int32(rf), resp), 18, ver, int32(rf), rf, time.Duration(rf)*time.Millisecond, time.Millisecond)
	if code == 0 {
		for _, r := range ranges {
			x.Advertised = append(x.Advertised, dissect.APIRange{Key: r[0], Min: r[1], Max: r[2]})
		}
	}
	return x
}

func metadataX(t *testing.T, c *reassembly.Conn, clientID string, ver int16, rf int64, answered bool) *dissect.Exchange {
	t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	req.Version = ver
	var resp *dissect.Frame
	if answered {
		r := kmsg.NewPtrMetadataResponse()
		r.Version = ver
		resp = respFrame(t, int32(rf), r)
	}
	return xchg(c, clientID, reqFrame(t, int32(rf), clientID, req), resp, 3, ver, int32(rf), rf, time.Duration(rf)*time.Millisecond, time.Millisecond)
}

func flagsOf(r *VersionsReport, kind FlagKind) []Flag {
	var out []Flag
	for _, f := range r.Flags {
		if f.Kind == kind {
			out = append(out, f)
		}
	}
	return out
}

func TestVersionsMixedCluster(t *testing.T) {
	v := NewVersionCollector()
	c1 := &reassembly.Conn{Index: 0, A: ap("10.0.0.1:1000"), B: ap("10.0.0.8:9092")}
	c2 := &reassembly.Conn{Index: 1, A: ap("10.0.0.1:1001"), B: ap("10.0.0.9:9092")}
	v.Exchange(apiVersionsX(t, c1, "app", 3, 0, [][3]int16{{0, 0, 11}, {3, 0, 12}, {18, 0, 4}}, 1))
	v.Exchange(metadataX(t, c1, "app", 12, 3, true))
	v.Exchange(apiVersionsX(t, c2, "app", 3, 0, [][3]int16{{0, 0, 9}, {3, 0, 12}, {18, 0, 3}}, 5))
	v.Exchange(metadataX(t, c2, "app", 12, 7, true))
	// The same Metadata v12 against a broker that stopped at 11.
	c3 := &reassembly.Conn{Index: 2, A: ap("10.0.0.1:1002"), B: ap("10.0.0.7:9092")}
	v.Exchange(apiVersionsX(t, c3, "app", 3, 0, [][3]int16{{0, 0, 9}, {3, 0, 11}, {18, 0, 3}}, 9))
	v.Exchange(metadataX(t, c3, "app", 12, 11, true))
	r := v.Report()

	if len(r.Brokers) != 3 || r.Brokers[0].Broker != "10.0.0.7:9092" || r.Brokers[2].Broker != "10.0.0.9:9092" {
		t.Fatalf("brokers %+v", r.Brokers)
	}
	ad := r.Brokers[1].Advertisements[r.Brokers[1].Effective]
	if !reflect.DeepEqual(ad.Ranges, []Range{{0, "Produce", 0, 11}, {3, "Metadata", 0, 12}, {18, "ApiVersions", 0, 4}}) ||
		!reflect.DeepEqual(ad.SupportedFeatures, []Feature{{"metadata.version", 1, 21}}) ||
		!reflect.DeepEqual(ad.FinalizedFeatures, []FinalizedFeature{{"metadata.version", 20, 20}}) || ad.FinalizedEpoch != 7 ||
		ad.Error != "NONE" || ad.FirstPacket != 2 {
		t.Errorf("advertisement %+v", ad)
	}
	mixed := flagsOf(r, FlagMixed)
	var keys []int16
	for _, f := range mixed {
		keys = append(keys, f.Key)
	}
	if !reflect.DeepEqual(keys, []int16{0, 3, 18}) {
		t.Errorf("mixed-cluster flags for keys %v, want [0 3 18]: %+v", keys, mixed)
	}
	if !strings.Contains(mixed[0].Detail, "10.0.0.8:9092 v0-11") || !strings.Contains(mixed[0].Detail, "10.0.0.9:9092 v0-9") {
		t.Errorf("mixed detail %q", mixed[0].Detail)
	}
	oor := flagsOf(r, FlagOutOfRange)
	if len(oor) != 1 || oor[0].Broker != "10.0.0.7:9092" || oor[0].Version != 12 || oor[0].Key != 3 || oor[0].Frame != 11 {
		t.Errorf("out-of-range flags %+v", oor)
	}
	var md []MatrixRow
	for _, row := range r.Matrix {
		if row.Key == 3 {
			md = append(md, row)
		}
	}
	if len(md) != 3 || md[0].Status != "outside" || md[1].Status != "ok" ||
		!reflect.DeepEqual(md[0].Flags, []FlagKind{FlagOutOfRange, FlagMixed}) || *md[0].Advertised != (Range{3, "Metadata", 0, 11}) {
		t.Errorf("Metadata matrix rows %+v", md)
	}
	if len(r.Clients) != 1 || !reflect.DeepEqual(r.Clients[0].Software, []string{"testclient/0.1"}) ||
		!reflect.DeepEqual(r.Clients[0].APIs, []APIUse{{3, "Metadata", []int16{12}, 3}, {18, "ApiVersions", []int16{3}, 3}}) {
		t.Errorf("clients %+v", r.Clients)
	}
}

// TestVersionsClosedUnsupported: closed-after-unsupported-version covers
// a version the broker did not advertise (Metadata v12, which Kafka
// defines, against an advertised 0-11) as well as one no Kafka release
// defines (v99); a close after an advertised version is not flagged.
func TestVersionsClosedUnsupported(t *testing.T) {
	v := NewVersionCollector()
	c := &reassembly.Conn{Index: 0, A: ap("10.0.0.1:1000"), B: ap("10.0.0.8:9092")}
	v.Exchange(apiVersionsX(t, c, "raw", 3, 0, [][3]int16{{3, 0, 11}, {18, 0, 3}}, 1))
	for i, ver := range []int16{12, 99, 11} {
		x := metadataX(t, &reassembly.Conn{Index: 1 + i, A: ap("10.0.0.1:1001"), B: ap("10.0.0.8:9092")}, "raw", ver, int64(10+i), false)
		x.Notes = []string{"connection closed with no response"}
		v.Exchange(x)
	}
	cl := flagsOf(v.Report(), FlagClosedUnsupported)
	if len(cl) != 2 || cl[0].Version != 12 || cl[0].Frame != 10 || !strings.Contains(cl[0].Detail, "the broker advertises v0-11") ||
		strings.Contains(cl[0].Detail, "no Kafka release") ||
		cl[1].Version != 99 || cl[1].Frame != 11 || !strings.Contains(cl[1].Detail, "no Kafka release defines it") {
		t.Errorf("closed flags %+v", cl)
	}
}

func TestVersionsKIP511AndClose(t *testing.T) {
	v := NewVersionCollector()
	c := &reassembly.Conn{Index: 0, A: ap("10.0.0.1:1000"), B: ap("10.0.0.8:9092")}
	// ApiVersions v99: UNSUPPORTED_VERSION with the broker's own range.
	v.Exchange(apiVersionsX(t, c, "raw", 99, errUnsupportedVersion, [][3]int16{{18, 0, 4}}, 1))
	v.Exchange(apiVersionsX(t, c, "raw", 4, 0, [][3]int16{{3, 0, 12}, {18, 0, 4}}, 3))
	// Metadata v99: the broker closes the connection.
	x := metadataX(t, c, "raw", 99, 5, false)
	x.Notes = []string{"connection closed with no response — the broker's answer to an unsupported version"}
	v.Exchange(x)
	// An in-range request cut by a close (a consumer leaving mid long-poll)
	// is no anomaly.
	c2 := &reassembly.Conn{Index: 1, A: ap("10.0.0.1:1001"), B: ap("10.0.0.8:9092")}
	y := metadataX(t, c2, "raw", 12, 7, false)
	y.Notes = []string{"connection closed with no response"}
	v.Exchange(y)
	r := v.Report()
	if len(flagsOf(r, FlagRejected)) != 0 {
		t.Errorf("in-range close flagged: %+v", flagsOf(r, FlagRejected))
	}

	dg := flagsOf(r, FlagDowngrade)
	if len(dg) != 1 || dg[0].Version != 4 || dg[0].Frame != 3 || !strings.Contains(dg[0].Detail, "v99") ||
		!strings.Contains(dg[0].Detail, "maximum being v4") {
		t.Errorf("downgrade flags %+v", dg)
	}
	cl := flagsOf(r, FlagClosedUnsupported)
	if len(cl) != 1 || cl[0].Key != 3 || cl[0].Version != 99 || cl[0].Frame != 5 ||
		!strings.Contains(cl[0].Detail, "no Kafka release defines it") {
		t.Errorf("closed flags %+v", cl)
	}
	// The error advertisement is kept, the later one is effective.
	b := r.Brokers[0]
	if len(b.Advertisements) != 2 || b.Effective != 1 || b.Advertisements[0].Error != "UNSUPPORTED_VERSION" ||
		b.Advertisements[0].RequestVersion != 99 {
		t.Errorf("broker %+v", b)
	}
	// Metadata v99 is outside the range; ApiVersions v99 is too, but it
	// was the KIP-511 negotiation: its row says "downgraded", no flag.
	oor := flagsOf(r, FlagOutOfRange)
	if len(oor) != 1 || oor[0].Key != 3 || oor[0].Version != 99 {
		t.Errorf("out-of-range %+v", oor)
	}
	for _, m := range r.Matrix {
		want := map[int16]string{3: "outside", 18: "downgraded"}[m.Key]
		if m.Status != want {
			t.Errorf("matrix %s status %q, want %q", m.API, m.Status, want)
		}
	}
	if len(flagsOf(r, FlagMixed)) != 0 {
		t.Error("one broker cannot be a mixed cluster")
	}
}

func TestVersionsRejected(t *testing.T) {
	v := NewVersionCollector()
	c := &reassembly.Conn{Index: 0, A: ap("10.0.0.1:1000"), B: ap("10.0.0.8:9092")}
	// A Kafka 4.x-like broker: Produce from v0, Fetch from v4.
	v.Exchange(apiVersionsX(t, c, "old", 3, 0, [][3]int16{{0, 0, 12}, {1, 4, 17}, {18, 0, 4}}, 1))
	req := kmsg.NewPtrProduceRequest()
	req.Version = 2
	req.Acks = 1
	resp := kmsg.NewPtrProduceResponse()
	resp.Version = 2
	resp.Topics = []kmsg.ProduceResponseTopic{{Topic: "t", Partitions: []kmsg.ProduceResponseTopicPartition{{ErrorCode: errUnsupportedVersion}}}}
	v.Exchange(xchg(c, "old", reqFrame(t, 3, "old", req), respFrame(t, 3, resp), 0, 2, 3, 3, 0, time.Millisecond))
	r := v.Report()
	rj := flagsOf(r, FlagRejected)
	// The Kafka 4.x note for the broker, and, since a top-level
	// UNSUPPORTED_VERSION is what a rejection carries, nothing per request
	// here: Produce v2 reports it per partition.
	if len(rj) != 1 || rj[0].Version != -1 || rj[0].Broker != "10.0.0.8:9092" || !strings.Contains(rj[0].Detail, "KAFKA-18659") {
		t.Errorf("rejected flags %+v", rj)
	}
	var row *MatrixRow
	for i := range r.Matrix {
		if r.Matrix[i].Key == 0 {
			row = &r.Matrix[i]
		}
	}
	if row == nil || row.Status != "ok" || !reflect.DeepEqual(row.Flags, []FlagKind{FlagRejected}) {
		t.Errorf("Produce row %+v", row)
	}

	// A top-level UNSUPPORTED_VERSION inside the advertised range is a
	// rejection; a plain answer is not.
	v2 := NewVersionCollector()
	v2.Exchange(apiVersionsX(t, c, "x", 3, 0, [][3]int16{{3, 0, 13}}, 1))
	v2.Exchange(metadataX(t, c, "x", 12, 3, true))
	mreq := kmsg.NewPtrMetadataRequest()
	mreq.Version = 13
	mresp := kmsg.NewPtrMetadataResponse()
	mresp.Version = 13
	mresp.ErrorCode = errUnsupportedVersion
	v2.Exchange(xchg(c, "x", reqFrame(t, 5, "x", mreq), respFrame(t, 5, mresp), 3, 13, 5, 5, 0, time.Millisecond))
	rj = flagsOf(v2.Report(), FlagRejected)
	if len(rj) != 1 || rj[0].Version != 13 || rj[0].Frame != 5 || !strings.Contains(rj[0].Detail, "inside the advertised v0-13") {
		t.Errorf("rejected flags %+v", rj)
	}
}

func TestCompare(t *testing.T) {
	c1 := &reassembly.Conn{Index: 0, A: ap("10.0.0.1:1000"), B: ap("10.0.0.8:9092")}
	c2 := &reassembly.Conn{Index: 1, A: ap("10.0.0.1:1001"), B: ap("10.0.0.9:9092")}
	before := NewVersionCollector()
	before.Exchange(apiVersionsX(t, c1, "app", 3, 0, [][3]int16{{0, 0, 11}, {3, 0, 12}, {18, 0, 4}, {57, 0, 1}}, 1))
	before.Exchange(apiVersionsX(t, c2, "app", 3, 0, [][3]int16{{0, 0, 9}, {3, 0, 12}, {18, 0, 4}, {57, 0, 1}}, 3))
	before.Exchange(metadataX(t, c1, "app", 4, 5, true))
	before.Exchange(metadataX(t, c1, "app", 12, 7, true))
	after := NewVersionCollector()
	after.Exchange(apiVersionsX(t, c1, "app", 3, 0, [][3]int16{{0, 3, 12}, {3, 5, 13}, {18, 0, 4}, {60, 0, 1}}, 1))
	cmp := Compare(before.Report(), after.Report())
	if cmp.BeforeBrokers != 2 || cmp.AfterBrokers != 1 {
		t.Errorf("brokers %d %d", cmp.BeforeBrokers, cmp.AfterBrokers)
	}
	want := []RangeChange{
		// Before, the cluster (two brokers) accepted Produce 0-9 only.
		{Key: 0, API: "Produce", Before: &Range{0, "Produce", 0, 9}, After: &Range{0, "Produce", 3, 12}, Change: "min 0 → 3, max 9 → 12"},
		{Key: 3, API: "Metadata", Before: &Range{3, "Metadata", 0, 12}, After: &Range{3, "Metadata", 5, 13}, Change: "min 0 → 5, max 12 → 13"},
		{Key: 57, API: "UpdateFeatures", Before: &Range{57, "UpdateFeatures", 0, 1}, Change: "removed"},
		{Key: 60, API: "DescribeCluster", After: &Range{60, "DescribeCluster", 0, 1}, Change: "added"},
	}
	if !reflect.DeepEqual(cmp.Ranges, want) {
		t.Errorf("ranges\n got %+v\nwant %+v", cmp.Ranges, want)
	}
	if len(cmp.Lost) != 1 || cmp.Lost[0].Key != 3 || !reflect.DeepEqual(cmp.Lost[0].Versions, []int16{4}) ||
		*cmp.Lost[0].ClientID != "app" || *cmp.Lost[0].After != (Range{3, "Metadata", 5, 13}) {
		t.Errorf("lost %+v", cmp.Lost)
	}
}

// TestCompareNoRangesBefore: a capture before with no ApiVersions (an old
// client that never sends it, or a capture begun after it did) has no
// ranges to compare, but its clients' versions still meet the ranges
// after: the old client losing Metadata v4 is reported.
func TestCompareNoRangesBefore(t *testing.T) {
	c1 := &reassembly.Conn{Index: 0, A: ap("10.0.0.1:1000"), B: ap("10.0.0.8:9092")}
	before := NewVersionCollector()
	before.Exchange(metadataX(t, c1, "old", 4, 5, true))
	after := NewVersionCollector()
	after.Exchange(apiVersionsX(t, c1, "app", 3, 0, [][3]int16{{3, 5, 13}, {18, 0, 4}}, 1))
	cmp := Compare(before.Report(), after.Report())
	if cmp.BeforeBrokers != 0 || cmp.AfterBrokers != 1 || len(cmp.Ranges) != 0 {
		t.Errorf("brokers %d %d, ranges %+v", cmp.BeforeBrokers, cmp.AfterBrokers, cmp.Ranges)
	}
	if len(cmp.Lost) != 1 || *cmp.Lost[0].ClientID != "old" || !reflect.DeepEqual(cmp.Lost[0].Versions, []int16{4}) || cmp.Lost[0].Impact != ImpactVersionRemoved {
		t.Errorf("lost %+v", cmp.Lost)
	}
	// Nothing after: nothing to compare with.
	if cmp := Compare(after.Report(), before.Report()); cmp.AfterBrokers != 0 || len(cmp.Lost) != 0 || len(cmp.Ranges) != 0 {
		t.Errorf("no ranges after: %+v", cmp)
	}
}

// TestVersionsNoUsable: a range with its minimum above its maximum is
// flagged once, as unusable.
func TestVersionsNoUsable(t *testing.T) {
	v := NewVersionCollector()
	c := &reassembly.Conn{Index: 0, A: ap("10.0.0.1:1000"), B: ap("10.0.0.8:9092")}
	v.Exchange(apiVersionsX(t, c, "app", 3, 0, [][3]int16{{18, 0, 4}, {23, 3, 2}}, 1))
	f := flagsOf(v.Report(), FlagNoUsable)
	if len(f) != 1 || f[0].Key != 23 || f[0].Broker != "10.0.0.8:9092" ||
		f[0].Detail != "the broker advertises v3-2: no usable version (min 3 > max 2)" {
		t.Errorf("no-usable flags %+v", f)
	}
}

// TestVersionsBudget: past its budget a VersionCollector keeps no new
// broker, client ID or matrix cell, and counts what it left out; what it
// lists stays exact and every request is either listed or counted.
func TestVersionsBudget(t *testing.T) {
	const brokers, clients = 200, 500
	var xs []*dissect.Exchange
	ranges := make([][3]int16, 30)
	for k := range ranges {
		ranges[k] = [3]int16{int16(k), 0, 11}
	}
	for i := range brokers {
		c := &reassembly.Conn{Index: i, A: ap("10.0.0.1:1000"), B: netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)}), 9092)}
		xs = append(xs, apiVersionsX(t, c, "app", 3, 0, ranges, int64(2*i+1)))
		if i > 0 {
			continue
		}
		for j := range clients {
			// Metadata v12 against a broker advertising 0-11: out of range.
			xs = append(xs, metadataX(t, c, fmt.Sprintf("client-%04d", j), 12, int64(1000+2*j), true))
		}
	}

	all := NewVersionCollector()
	const budget = 64 << 10
	v := NewBoundedVersionCollector(budget)
	for _, x := range xs {
		all.Exchange(x)
		v.Exchange(x)
	}
	if r := all.Report(); r.Folded != nil || len(r.Brokers) != brokers || len(r.Clients) != clients+1 || len(flagsOf(r, FlagOutOfRange)) != clients {
		t.Fatalf("default budget: folded %+v, %d brokers, %d clients", r.Folded, len(r.Brokers), len(r.Clients))
	}
	if v.mem > budget {
		t.Errorf("kept %d bytes, budget %d", v.mem, budget)
	}
	r := v.Report()
	f := r.Folded
	if f == nil || f.MaxMemory != budget {
		t.Fatalf("folded %+v", f)
	}
	// The first broker is kept, then client IDs while they fit, then no
	// broker more: each is counted.
	if len(r.Brokers) == 0 || len(r.Brokers) == brokers || int64(len(r.Brokers))+f.BrokerResponses != brokers || f.Advertisements != f.BrokerResponses {
		t.Errorf("%d brokers kept, folded %+v", len(r.Brokers), f)
	}
	for _, b := range r.Brokers {
		if len(b.Advertisements) != 1 || len(b.Advertisements[0].Ranges) != 30 || b.Advertisements[0].Count != 1 {
			t.Errorf("broker %s: %+v", b.Broker, b.Advertisements)
		}
	}
	var listed, inRows int64
	for _, cl := range r.Clients {
		for _, u := range cl.APIs {
			listed += u.Requests
		}
	}
	for _, row := range r.Matrix {
		inRows += row.Requests
	}
	if n := int64(brokers + clients); listed+f.ClientRequests != n || inRows+f.MatrixRequests != n || f.ClientRequests == 0 {
		t.Errorf("requests: %d listed + %d folded, %d in rows + %d folded; want %d", listed, f.ClientRequests, inRows, f.MatrixRequests, n)
	}
	// The client IDs kept are the first ones, each with its exact row
	// and out-of-range flag.
	oor := flagsOf(r, FlagOutOfRange)
	if len(r.Clients) < 2 || *r.Clients[0].ClientID != "app" || *r.Clients[1].ClientID != "client-0000" || len(oor) == 0 {
		t.Fatalf("clients %d, first %+v; %d out-of-range flags", len(r.Clients), r.Clients[:min(2, len(r.Clients))], len(oor))
	}
	for _, row := range r.Matrix {
		if row.Key == 3 && (row.Status != "outside" || row.Requests != 1 || !reflect.DeepEqual(row.Flags, []FlagKind{FlagOutOfRange})) {
			t.Errorf("row %+v", row)
		}
	}
}

// TestMarkMatrixScopes: a flag reaches the rows of its API whose broker
// and client it names, or every broker or client when it names none.
func TestMarkMatrixScopes(t *testing.T) {
	r := &VersionsReport{
		Matrix: []MatrixRow{
			{Key: 3, ClientID: strp("a"), Broker: "b1", Versions: []int16{12}},
			{Key: 3, ClientID: strp("b"), Broker: "b1", Versions: []int16{12}},
			{Key: 3, ClientID: strp("a"), Broker: "b2", Versions: []int16{11}},
			{Key: 0, ClientID: nil, Broker: "b1", Versions: []int16{2}},
		},
		Flags: []Flag{
			{Kind: FlagOutOfRange, Key: 3, Version: 12, ClientID: "a", Broker: "b1"},
			{Kind: FlagMixed, Key: 3, Version: -1},
			{Kind: FlagNoUsable, Key: 3, Version: -1, Broker: "b2"},
			{Kind: FlagRejected, Key: 0, Version: -1, Broker: "b1"},
			{Kind: FlagClosedUnsupported, Key: 0, Version: 2, ClientID: "", Broker: "b1"},
		},
	}
	(&VersionCollector{}).markMatrix(r)
	want := [][]FlagKind{
		{FlagOutOfRange, FlagMixed},
		{FlagMixed},
		{FlagNoUsable, FlagMixed},
		{FlagClosedUnsupported, FlagRejected},
	}
	for i, row := range r.Matrix {
		if !slices.Equal(row.Flags, want[i]) {
			t.Errorf("row %d: %v, want %v", i, row.Flags, want[i])
		}
	}
}

// BenchmarkVersionsReport: a report of n clients, each with an
// out-of-range flag, costs time in proportion to n (it grew with n²: each
// matrix row was checked against every flag).
func BenchmarkVersionsReport(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			t := &testing.T{}
			v := NewBoundedVersionCollector(1 << 30)
			c := &reassembly.Conn{Index: 0, A: ap("10.0.0.1:1000"), B: ap("10.0.0.8:9092")}
			v.Exchange(apiVersionsX(t, c, "app", 3, 0, [][3]int16{{3, 0, 11}, {18, 0, 4}}, 1))
			x := metadataX(t, c, "", 12, 3, true)
			for i := range n {
				y := *x
				y.ClientID = fmt.Sprintf("client-%06d", i)
				v.Exchange(&y)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if r := v.Report(); len(r.Matrix) != n+1 {
					b.Fatalf("%d rows", len(r.Matrix))
				}
			}
		})
	}
}

// TestVersionsMixedTwoClusters: brokers whose Metadata responses name
// different cluster IDs are two clusters, not one mid-upgrade: their
// different ranges are no mixed-cluster flag; two brokers of one of them
// that differ are, named by the cluster.
func TestVersionsMixedTwoClusters(t *testing.T) {
	clusterMD := func(c *reassembly.Conn, id string, rf int64) *dissect.Exchange {
		req := kmsg.NewPtrMetadataRequest()
		req.Version = 12
		r := kmsg.NewPtrMetadataResponse()
		r.Version, r.ClusterID = 12, kmsg.StringPtr(id)
		return xchg(c, "app", reqFrame(t, int32(rf), "app", req), respFrame(t, int32(rf), r), 3, 12, int32(rf), rf, time.Duration(rf)*time.Millisecond, time.Millisecond)
	}
	conn := func(i int, broker string) *reassembly.Conn {
		return &reassembly.Conn{Index: i, A: ap(fmt.Sprintf("10.0.0.1:%d", 1000+i)), B: ap(broker)}
	}
	v := NewVersionCollector()
	a, b, c := conn(0, "10.0.0.8:9092"), conn(1, "10.0.1.8:9092"), conn(2, "10.0.1.9:9092")
	v.Exchange(apiVersionsX(t, a, "app", 3, 0, [][3]int16{{0, 0, 11}, {3, 0, 12}, {18, 0, 4}}, 1))
	v.Exchange(clusterMD(a, "cluster-old", 3))
	v.Exchange(apiVersionsX(t, b, "app", 3, 0, [][3]int16{{0, 3, 13}, {3, 0, 13}, {18, 0, 4}}, 5))
	v.Exchange(clusterMD(b, "cluster-new", 7))
	if f := flagsOf(v.Report(), FlagMixed); len(f) != 0 {
		t.Errorf("two clusters: %+v", f)
	}
	// A third broker, of cluster-new, advertising less than its peer.
	v.Exchange(apiVersionsX(t, c, "app", 3, 0, [][3]int16{{0, 3, 12}, {3, 0, 13}, {18, 0, 4}}, 9))
	v.Exchange(clusterMD(c, "cluster-new", 11))
	f := flagsOf(v.Report(), FlagMixed)
	if len(f) != 1 || f[0].API != "Produce" || f[0].Detail != "cluster cluster-new: brokers advertise different ranges: 10.0.1.8:9092 v3-13, 10.0.1.9:9092 v3-12" {
		t.Errorf("one cluster's brokers differ: %+v", f)
	}
}

// TestVersionsDuplicateKeyLastWins: a broker listing Metadata 0-12 and
// then 0-11 advertises 0-11, as Kafka's clients read it (the last listing
// of a key replaces the first): Metadata v12 is outside it. The first
// listing was used and the request read as within.
func TestVersionsDuplicateKeyLastWins(t *testing.T) {
	v := NewVersionCollector()
	c := &reassembly.Conn{Index: 0, A: ap("10.0.0.1:1000"), B: ap("10.0.0.8:9092")}
	v.Exchange(apiVersionsX(t, c, "app", 3, 0, [][3]int16{{3, 0, 12}, {18, 0, 4}, {3, 0, 11}}, 1))
	v.Exchange(metadataX(t, c, "app", 12, 3, true))
	r := v.Report()
	oor := flagsOf(r, FlagOutOfRange)
	if len(oor) != 1 || oor[0].Key != 3 || oor[0].Version != 12 || oor[0].Frame != 3 {
		t.Errorf("out-of-range flags %+v, want Metadata v12 at frame 3", oor)
	}
	for _, row := range r.Matrix {
		if row.Key == 3 && (row.Status != "outside" || *row.Advertised != (Range{3, "Metadata", 0, 11})) {
			t.Errorf("Metadata matrix row %+v %+v, want outside 0-11", row, *row.Advertised)
		}
	}
}

// TestCompareRefusedBefore: a version the cluster refused before too is
// not lost: a capture compared with itself, whose one ApiVersions
// response advertised Produce only while the client used Metadata v4,
// listed Metadata v4 as lost (versions --against, kwire diff). Metadata
// v4 accepted before and refused after still is.
func TestCompareRefusedBefore(t *testing.T) {
	c1 := &reassembly.Conn{Index: 0, A: ap("10.0.0.1:1000"), B: ap("10.0.0.8:9092")}
	same := NewVersionCollector()
	same.Exchange(apiVersionsX(t, c1, "app", 3, 0, [][3]int16{{0, 0, 9}}, 1))
	same.Exchange(metadataX(t, c1, "app", 4, 5, true))
	if cmp := Compare(same.Report(), same.Report()); len(cmp.Lost) != 0 || len(cmp.Ranges) != 0 {
		t.Errorf("a capture against itself: lost %+v, ranges %+v", cmp.Lost, cmp.Ranges)
	}
	before := NewVersionCollector()
	before.Exchange(apiVersionsX(t, c1, "app", 3, 0, [][3]int16{{0, 0, 9}, {3, 0, 12}}, 1))
	before.Exchange(metadataX(t, c1, "app", 4, 5, true))
	cmp := Compare(before.Report(), same.Report())
	if len(cmp.Lost) != 1 || cmp.Lost[0].Key != 3 || !reflect.DeepEqual(cmp.Lost[0].Versions, []int16{4}) || cmp.Lost[0].After != nil {
		t.Errorf("lost %+v", cmp.Lost)
	}
	// A mixed cluster before: one broker accepted Metadata v4, the other
	// lacked Metadata (so the cluster range has none); refused by every
	// broker after, v4 is lost.
	c2 := &reassembly.Conn{Index: 1, A: ap("10.0.0.1:1001"), B: ap("10.0.0.9:9092")}
	mixed := NewVersionCollector()
	mixed.Exchange(apiVersionsX(t, c1, "app", 3, 0, [][3]int16{{0, 0, 9}, {3, 0, 12}}, 1))
	mixed.Exchange(apiVersionsX(t, c2, "app", 3, 0, [][3]int16{{0, 0, 9}}, 3))
	mixed.Exchange(metadataX(t, c1, "app", 4, 5, true))
	cmp = Compare(mixed.Report(), same.Report())
	if len(cmp.Lost) != 1 || cmp.Lost[0].Key != 3 || !reflect.DeepEqual(cmp.Lost[0].Versions, []int16{4}) {
		t.Errorf("mixed cluster before: lost %+v", cmp.Lost)
	}
}
