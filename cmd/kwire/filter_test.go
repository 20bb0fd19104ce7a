package main

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/protocol"
	"github.com/kwire/kwire/reassembly"
	"github.com/kwire/kwire/render"
)

// testExchange builds a Produce v9 exchange by hand: the request names
// topics "orders" and "audit", the response reports
// NOT_LEADER_OR_FOLLOWER (6) for one partition of "orders".
func testExchange() *dissect.Exchange {
	str := func(name, v string) *protocol.Node {
		return &protocol.Node{Name: name, Kind: protocol.KindString, Str: v}
	}
	i16 := func(name string, v int64) *protocol.Node {
		return &protocol.Node{Name: name, Kind: protocol.KindInt, Int: v}
	}
	elem := func(children ...*protocol.Node) *protocol.Node {
		return &protocol.Node{Name: "[i]", Kind: protocol.KindStruct, Children: children}
	}
	arr := func(name string, elems ...*protocol.Node) *protocol.Node {
		return &protocol.Node{Name: name, Kind: protocol.KindArray, Int: int64(len(elems)), Children: elems}
	}
	req := &protocol.Node{Name: "ProduceRequest", Children: []*protocol.Node{
		str("TransactionalId", ""),
		arr("TopicData", elem(str("Name", "orders")), elem(str("Name", "audit"))),
	}}
	resp := &protocol.Node{Name: "ProduceResponse", Children: []*protocol.Node{
		arr("Responses", elem(str("Name", "orders"),
			arr("PartitionResponses", elem(i16("Index", 0), i16("ErrorCode", 6)), elem(i16("Index", 1), i16("ErrorCode", 0))))),
	}}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return &dissect.Exchange{
		Conn:          &reassembly.Conn{Index: 3},
		Client:        netip.MustParseAddrPort("10.0.0.1:53422"),
		Broker:        netip.MustParseAddrPort("10.0.0.2:9092"),
		Kind:          dissect.KindPaired,
		APIKey:        0,
		APIVersion:    9,
		CorrelationID: 42,
		ClientID:      "producer-1",
		Request:       &dissect.Frame{FirstFrame: 10, LastFrame: 12, Time: t0, Bytes: make([]byte, 120), Tree: &protocol.Tree{Root: req}},
		Response:      &dissect.Frame{FirstFrame: 14, LastFrame: 14, Time: t0.Add(2500 * time.Microsecond), Bytes: make([]byte, 60), Tree: &protocol.Tree{Root: resp}},
	}
}

func TestFieldsOf(t *testing.T) {
	f := fieldsOf(testExchange(), nil)
	if f.API != "Produce" || f.APIKey != 0 || f.Version != 9 || f.CorrelationID != 42 || f.ClientID != "producer-1" {
		t.Errorf("header fields = %q %d v%d #%d %q", f.API, f.APIKey, f.Version, f.CorrelationID, f.ClientID)
	}
	if f.LatencyMS != 2.5 {
		t.Errorf("latency_ms = %v, want 2.5", f.LatencyMS)
	}
	if f.RequestSize != 120 || f.ResponseSize != 60 {
		t.Errorf("sizes = %d, %d, want 120, 60", f.RequestSize, f.ResponseSize)
	}
	if want := []string{"orders", "audit"}; !slices.Equal(f.Topics, want) {
		t.Errorf("topics = %q, want %q", f.Topics, want)
	}
	if want := []string{"NOT_LEADER_OR_FOLLOWER"}; !slices.Equal(f.Errors, want) {
		t.Errorf("errors = %q, want %q", f.Errors, want)
	}
	if f.Stream != 3 || f.Client != "10.0.0.1:53422" || f.Broker != "10.0.0.2:9092" || f.Kind != "paired" {
		t.Errorf("connection fields = %d %s %s %s", f.Stream, f.Client, f.Broker, f.Kind)
	}
}

func TestExchangeFilter(t *testing.T) {
	ex := testExchange()
	f := fieldsOf(ex, nil)
	none := func() *exchangeFilter { return &exchangeFilter{stream: -1} }
	tests := []struct {
		name string
		set  func(*exchangeFilter)
		want bool
	}{
		{"no conditions", func(*exchangeFilter) {}, true},
		{"api matches", func(fl *exchangeFilter) { fl.apis = map[int16]bool{0: true, 3: true} }, true},
		{"api differs", func(fl *exchangeFilter) { fl.apis = map[int16]bool{1: true} }, false},
		{"topic matches", func(fl *exchangeFilter) { fl.topics = []string{"audit"} }, true},
		{"topic differs", func(fl *exchangeFilter) { fl.topics = []string{"payments"} }, false},
		{"client id", func(fl *exchangeFilter) { fl.clientIDs = []string{"producer-1"} }, true},
		{"client id differs", func(fl *exchangeFilter) { fl.clientIDs = []string{"consumer"} }, false},
		{"errors", func(fl *exchangeFilter) { fl.errors = true }, true},
		{"stream", func(fl *exchangeFilter) { fl.stream = 3 }, true},
		{"stream differs", func(fl *exchangeFilter) { fl.stream = 0 }, false},
		{"frame in request", func(fl *exchangeFilter) { fl.frame = 11 }, true},
		{"frame in response", func(fl *exchangeFilter) { fl.frame = 14 }, true},
		{"frame between", func(fl *exchangeFilter) { fl.frame = 13 }, false},
		{"expr", func(fl *exchangeFilter) {
			fl.program = mustCompile(t, `api == "Produce" && latency_ms > 2 && "orders" in topics && "NOT_LEADER_OR_FOLLOWER" in errors`)
		}, true},
		{"expr false", func(fl *exchangeFilter) { fl.program = mustCompile(t, `request_size < 100 || stream != 3`) }, false},
		{"expr runtime error", func(fl *exchangeFilter) { fl.program = mustCompile(t, `topics[5] == "x"`) }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fl := none()
			tt.set(fl)
			if got := fl.match(ex, f); got != tt.want {
				t.Errorf("match = %v, want %v", got, tt.want)
			}
		})
	}
	noErr := testExchange()
	noErr.Response.Tree.Root.Children[0].Children[0].Children[1].Children[0].Children[1].Int = 0
	fl := none()
	fl.errors = true
	if fl.match(noErr, fieldsOf(noErr, nil)) {
		t.Error("--errors matched an exchange without errors")
	}
}

func mustCompile(t *testing.T, src string) *exprProgram {
	t.Helper()
	p, err := compileFilter(src)
	if err != nil {
		t.Fatalf("compileFilter(%q): %v", src, err)
	}
	return p
}

func TestCompileFilterErrors(t *testing.T) {
	tests := []struct {
		src  string
		want []string // substrings of the error, in order
	}{
		{`api == "Fetch" && latncy_ms > 5`, []string{"unknown name latncy_ms", "column 19", "\n  api == \"Fetch\" && latncy_ms > 5\n                    ^"}},
		{`api_key + 1`, []string{"expected bool"}},
		{`version >`, []string{"column", "\n  version >\n"}},
	}
	for _, tt := range tests {
		_, err := compileFilter(tt.src)
		if err == nil {
			t.Errorf("compileFilter(%q) succeeded", tt.src)
			continue
		}
		msg := err.Error()
		rest := msg
		for _, w := range tt.want {
			i := strings.Index(rest, w)
			if i < 0 {
				t.Errorf("compileFilter(%q) error\n%s\ndoes not contain %q (in order)", tt.src, msg, w)
				break
			}
			rest = rest[i+len(w):]
		}
	}
}

func TestTopicIDs(t *testing.T) {
	// A Metadata response names topic "orders" with its ID; a later
	// Produce v13 request names the topic by ID only.
	id := []byte{0xb2, 0x1e, 0x43, 0x45, 0x03, 0x19, 0x48, 0x59, 0xbb, 0x62, 0xc5, 0xb5, 0x30, 0xd8, 0xa2, 0x59}
	other := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	uuid := func(raw []byte) *protocol.Node {
		return &protocol.Node{Name: "TopicId", Kind: protocol.KindUUID, Raw: raw}
	}
	meta := &protocol.Node{Name: "MetadataResponse", Children: []*protocol.Node{
		{Name: "Topics", Kind: protocol.KindArray, Children: []*protocol.Node{
			{Name: "[0]", Kind: protocol.KindStruct, Children: []*protocol.Node{
				{Name: "Name", Kind: protocol.KindString, Str: "orders"}, uuid(id),
			}},
		}},
	}}
	ids := make(topicIDs)
	ids.learn(meta, 0)
	if got := ids["sh5DRQMZSFm7YsW1MNiiWQ"]; got != "orders" {
		t.Fatalf("learnt %v, want sh5DRQMZSFm7YsW1MNiiWQ → orders", ids)
	}
	produce := &protocol.Node{Name: "ProduceRequest", Children: []*protocol.Node{
		{Name: "TopicData", Kind: protocol.KindArray, Children: []*protocol.Node{
			{Name: "[0]", Kind: protocol.KindStruct, Children: []*protocol.Node{uuid(id)}},
			{Name: "[1]", Kind: protocol.KindStruct, Children: []*protocol.Node{uuid(other)}},
			{Name: "[2]", Kind: protocol.KindStruct, Children: []*protocol.Node{uuid(make([]byte, 16))}},
		}},
	}}
	ex := &dissect.Exchange{APIKey: 0, APIVersion: 13, Request: &dissect.Frame{Tree: &protocol.Tree{Root: produce}}}
	f := fieldsOf(ex, ids)
	if got, want := f.Topics, []string{"orders", "AQIDBAUGBwgJCgsMDQ4PEA", zeroUUID}; !slices.Equal(got, want) {
		t.Errorf("topics = %q, want %q (resolved name, the unknown ID, the zero ID that alone names a topic)", got, want)
	}
	// Beside a name, the zero ID is "no ID": not a topic.
	metaReq := &protocol.Node{Name: "MetadataRequest", Children: []*protocol.Node{
		{Name: "Topics", Kind: protocol.KindArray, Children: []*protocol.Node{
			{Name: "[0]", Kind: protocol.KindStruct, Children: []*protocol.Node{
				uuid(make([]byte, 16)), {Name: "Name", Kind: protocol.KindString, Str: "orders"},
			}},
		}},
	}}
	exMeta := &dissect.Exchange{APIKey: 3, APIVersion: 12, Request: &dissect.Frame{Tree: &protocol.Tree{Root: metaReq}}}
	if got, want := fieldsOf(exMeta, ids).Topics, []string{"orders"}; !slices.Equal(got, want) {
		t.Errorf("Metadata topics = %q, want %q", got, want)
	}
	// --topic matches a resolved topic by name and by ID.
	for _, topic := range []string{"orders", "sh5DRQMZSFm7YsW1MNiiWQ", "AQIDBAUGBwgJCgsMDQ4PEA"} {
		if fl := (&exchangeFilter{stream: -1, topics: []string{topic}}); !fl.match(ex, f) {
			t.Errorf("--topic %s does not match", topic)
		}
	}
	if fl := (&exchangeFilter{stream: -1, topics: []string{"payments"}}); fl.match(ex, f) {
		t.Error("--topic payments matches")
	}
	// An exchange that names the topic by name only (Produce v7) matches
	// --topic with the learnt ID, not with an ID not learnt.
	byName := &protocol.Node{Name: "ProduceRequest", Children: []*protocol.Node{
		{Name: "TopicData", Kind: protocol.KindArray, Children: []*protocol.Node{
			{Name: "[0]", Kind: protocol.KindStruct, Children: []*protocol.Node{{Name: "Name", Kind: protocol.KindString, Str: "orders"}}},
		}},
	}}
	ex7 := &dissect.Exchange{APIKey: 0, APIVersion: 7, Request: &dissect.Frame{Tree: &protocol.Tree{Root: byName}}}
	if fl := (&exchangeFilter{stream: -1, topics: []string{"sh5DRQMZSFm7YsW1MNiiWQ"}}); !fl.match(ex7, fieldsOf(ex7, ids)) {
		t.Error("--topic with the ID of orders does not match a Produce v7 naming orders")
	}
	if fl := (&exchangeFilter{stream: -1, topics: []string{"sh5DRQMZSFm7YsW1MNiiWQ"}}); fl.match(ex7, fieldsOf(ex7, nil)) {
		t.Error("--topic with an ID not learnt matches a Produce v7 naming orders")
	}
}

func TestTopicIDsBounded(t *testing.T) {
	ids := make(topicIDs)
	for i := range maxTopicIDs + 10 {
		raw := make([]byte, 16)
		raw[0], raw[1], raw[2], raw[15] = byte(i>>16), byte(i>>8), byte(i), 1
		ids.learn(&protocol.Node{Kind: protocol.KindStruct, Children: []*protocol.Node{
			{Name: "Name", Kind: protocol.KindString, Str: "t"},
			{Name: "TopicId", Kind: protocol.KindUUID, Raw: raw},
		}}, 0)
	}
	if len(ids) != maxTopicIDs {
		t.Errorf("%d topic IDs remembered, want the bound %d", len(ids), maxTopicIDs)
	}
}

// TestFilterKinds checks that --filter's kinds are --json's, and that the
// old spelling no-response still works.
func TestFilterKinds(t *testing.T) {
	ex := testExchange()
	ex.Kind = dissect.KindNoResponse
	f := fieldsOf(ex, nil)
	if f.Kind != "noResponse" {
		t.Fatalf("kind = %q, want noResponse", f.Kind)
	}
	for src, want := range map[string]bool{
		`kind == "noResponse"`:                   true,
		`kind == "no-response"`:                  true,
		`"no-response" == kind`:                  true,
		`kind != "no-response"`:                  false,
		`kind in ["paired", "no-response"]`:      true,
		`kind == "paired"`:                       false,
		`client_id == "no-response" || true`:     true,
		`kind == "unanswered" || kind == "sasl"`: false,
	} {
		fl := &exchangeFilter{stream: -1, program: mustCompile(t, src)}
		if got := fl.match(ex, f); got != want {
			t.Errorf("%s: match = %v, want %v", src, got, want)
		}
	}
	for _, k := range []dissect.Kind{dissect.KindPaired, dissect.KindNoResponse, dissect.KindUnanswered, dissect.KindOrphan, dissect.KindSASL} {
		ex.Kind = k
		if got, want := fieldsOf(ex, nil).Kind, render.NewExchangeDoc(ex, render.Options{}).Kind; got != want {
			t.Errorf("kind %v: --filter's %q, --json's %q", k, got, want)
		}
	}
}
