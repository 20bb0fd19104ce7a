package main

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/facts"
	"github.com/kwire/kwire/protocol"
	"github.com/kwire/kwire/reassembly"
	"github.com/kwire/kwire/render"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// testExchange builds a Produce v9 exchange: the request names topics
// "orders" and "audit", the response reports NOT_LEADER_OR_FOLLOWER (6)
// for one partition of "orders".
func testExchange() *dissect.Exchange {
	req := kmsg.NewPtrProduceRequest()
	req.Version = 9
	for _, n := range []string{"orders", "audit"} {
		x := kmsg.NewProduceRequestTopic()
		x.Topic = n
		req.Topics = append(req.Topics, x)
	}
	resp := kmsg.NewPtrProduceResponse()
	resp.Version = 9
	rt := kmsg.NewProduceResponseTopic()
	rt.Topic = "orders"
	for i, code := range []int16{6, 0} {
		p := kmsg.NewProduceResponseTopicPartition()
		p.Partition, p.ErrorCode = int32(i), code
		rt.Partitions = append(rt.Partitions, p)
	}
	resp.Topics = append(resp.Topics, rt)
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rtree := protocol.DecodeBody(0, 9, false, req.AppendTo(nil))
	ptree := protocol.DecodeBody(0, 9, true, resp.AppendTo(nil))
	return &dissect.Exchange{
		Conn:          &reassembly.Conn{Index: 3},
		Client:        netip.MustParseAddrPort("10.0.0.1:53422"),
		Broker:        netip.MustParseAddrPort("10.0.0.2:9092"),
		Kind:          dissect.KindPaired,
		APIKey:        0,
		APIVersion:    9,
		CorrelationID: 42,
		ClientID:      "producer-1",
		Request:       &dissect.Frame{FirstPacket: 10, LastPacket: 12, Time: t0, Bytes: make([]byte, 120), Tree: rtree},
		Response:      &dissect.Frame{FirstPacket: 14, LastPacket: 14, Time: t0.Add(2500 * time.Microsecond), Bytes: make([]byte, 60), Tree: ptree},
	}
}

func TestFieldsOf(t *testing.T) {
	f := fieldsOf(testExchange(), nil, true, false)
	if f.API != "Produce" || f.APIKey != 0 || f.APIVersion != 9 || f.CorrelationID != 42 || f.ClientID == nil || *f.ClientID != "producer-1" {
		t.Errorf("header fields = %q %d v%d #%d %v", f.API, f.APIKey, f.APIVersion, f.CorrelationID, f.ClientID)
	}
	if f.LatencyMs == nil || *f.LatencyMs != 2.5 {
		t.Errorf("latencyMs = %v, want 2.5", f.LatencyMs)
	}
	if f.Request == nil || f.Request.Size != 120 || f.Response == nil || f.Response.Size != 60 || f.Request.Body != nil {
		t.Errorf("frames = %+v, %+v, want sizes 120, 60 and no bodies", f.Request, f.Response)
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
	if f.Facts == nil || len(f.Facts.Topics) != 2 || len(f.Facts.Errors) != 1 {
		t.Errorf("facts = %+v", f.Facts)
	}
	if b := fieldsOf(testExchange(), nil, true, true); b.Request.Body == nil || b.Response.Header != nil {
		t.Errorf("bodies: request body %v, response header %v (a body decoded alone has no header)", b.Request.Body, b.Response.Header)
	}
}

func TestExchangeFilter(t *testing.T) {
	ex := testExchange()
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
		{"frame in request", func(fl *exchangeFilter) { fl.frames = []frameRange{{11, 11}} }, true},
		{"frame in response", func(fl *exchangeFilter) { fl.frames = []frameRange{{14, 14}} }, true},
		{"frame between", func(fl *exchangeFilter) { fl.frames = []frameRange{{13, 13}} }, false},
		{"frame range over the request", func(fl *exchangeFilter) { fl.frames = []frameRange{{1, 11}} }, true},
		{"frame range after", func(fl *exchangeFilter) { fl.frames = []frameRange{{16, 0}} }, false},
		{"frame ranges, one meets", func(fl *exchangeFilter) { fl.frames = []frameRange{{1, 2}, {14, 0}} }, true},
		{"expr", func(fl *exchangeFilter) {
			fl.program, fl.bodies = mustCompile(t, `api == "Produce" && latencyMs > 2 && "orders" in topics && "NOT_LEADER_OR_FOLLOWER" in errors`)
		}, true},
		{"expr false", func(fl *exchangeFilter) {
			fl.program, fl.bodies = mustCompile(t, `request.size < 100 || stream != 3`)
		}, false},
		{"expr runtime error", func(fl *exchangeFilter) { fl.program, fl.bodies = mustCompile(t, `topics[5] == "x"`) }, false},
		{"expr facts", func(fl *exchangeFilter) {
			fl.program, fl.bodies = mustCompile(t, `any(facts.topics, {.name == "orders" && any(.partitions, {.partition == 0 && .error == "NOT_LEADER_OR_FOLLOWER"})})`)
		}, true},
		{"expr facts error place", func(fl *exchangeFilter) {
			fl.program, fl.bodies = mustCompile(t, `any(facts.errors, {.topic == "audit"})`)
		}, false},
		{"expr null path", func(fl *exchangeFilter) { fl.program, fl.bodies = mustCompile(t, `facts.group.groupId == "g"`) }, false},
		{"expr body", func(fl *exchangeFilter) {
			fl.program, fl.bodies = mustCompile(t, `request.body.acks == 0 && request.body.topicData[1].name == "audit"`)
		}, true},
		{"expr body differs", func(fl *exchangeFilter) {
			fl.program, fl.bodies = mustCompile(t, `request.body.acks == -1 || request.body.topicData[0].name == "audit"`)
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fl := none()
			tt.set(fl)
			f := fieldsOf(ex, nil, fl.program != nil, fl.bodies)
			if got := fl.match(ex, f); got != tt.want {
				t.Errorf("match = %v, want %v", got, tt.want)
			}
		})
	}
	noErr := testExchange()
	noErr.Response.Tree.Root.Children[0].Children[0].Children[1].Children[0].Children[1].Int = 0
	fl := none()
	fl.errors = true
	if fl.match(noErr, fieldsOf(noErr, nil, false, false)) {
		t.Error("--errors matched an exchange without errors")
	}
}

func mustCompile(t *testing.T, src string) (*exprProgram, bool) {
	t.Helper()
	p, bodies, err := compileFilter(src)
	if err != nil {
		t.Fatalf("compileFilter(%q): %v", src, err)
	}
	return p, bodies
}

func TestCompileFilterErrors(t *testing.T) {
	tests := []struct {
		src  string
		want []string // substrings of the error, in order
	}{
		{`api == "Fetch" && latncyMs > 5`, []string{"unknown name latncyMs; the nearest: latencyMs", "column 19", "\n  api == \"Fetch\" && latncyMs > 5\n                    ^"}},
		// A misspelt name at the top or in a typed document: the nearest
		// names there.
		{`clientid == "x"`, []string{"unknown name clientid; the nearest: clientId, "}},
		{`facts.group.groupid == "x"`, []string{"no field groupid there; the nearest: groupId, ", "column 13"}},
		{`facts.topics[0].nme == "x"`, []string{"no field nme there; the nearest: name, "}},
		// api compared with a text that names no API as api holds it.
		{`api == "produce"`, []string{`--filter: api is "Produce" as Kafka names it, not "produce"`}},
		{`"metdata" == api`, []string{`--filter: no API is named "metdata"; the nearest: Metadata, `}},
		{`api in ["Fetch", "joingroup"]`, []string{`api is "JoinGroup" as Kafka names it, not "joingroup"`}},
		{`api != "3"`, []string{"api holds an API's name, not its key: compare apiKey with 3"}},
		// Not a condition: what it is, in the filter's words, and how to
		// make one of it (expr said "expected bool, but got *float64").
		{`apiKey + 1`, []string{"--filter: apiKey + 1 is a number; a filter must be true or false: compare it, e.g. apiKey + 1 > 100"}},
		{`latencyMs`, []string{"--filter: latencyMs is a number; a filter must be true or false: compare it, e.g. latencyMs > 100"}},
		{` clientId `, []string{"--filter: clientId is text; a filter must be true or false: compare it, e.g. clientId == \"...\""}},
		{`errors`, []string{"--filter: errors is a list; a filter must be true or false: compare it, e.g. len(errors) > 0, or \"...\" in errors"}},
		{`facts.group`, []string{"--filter: facts.group is an object; a filter must be true or false"}},
		// A path into a body or header that no schema has (any API, any
		// version): refused, with the nearest names there.
		{`request.body.foo.bar == 1`, []string{"--filter: request.body.foo: no API's request has a field foo there (in any version); the nearest: request.body."}},
		{`request.body.topicData[0].nme == "x"`, []string{"request.body.topicData[...].nme: no API's request has a field nme there", "the nearest: request.body.topicData[...].name, "}},
		{`response.body.responses[0].partitionResponses[0].errCode != 0`, []string{"the nearest: response.body.responses[...].partitionResponses[...].errorCode, "}},
		{`request.header.clientID == "x"`, []string{"request.header.clientID: no API's request has a field clientID there", "the nearest: request.header.clientId, "}},
		{`request.body.acks.value == 1`, []string{"--filter: request.body.acks.value: request.body.acks holds a value, not fields, in every API's request"}},
		{`apiVersion >`, []string{"column", "\n  apiVersion >\n"}},
		// A Kafka word without its quotes reads as a name: say to quote
		// it, not the nearest names (errors, broker, ...).
		{`api == Produce`, []string{`unknown name Produce; Produce is an API's name: write it in quotes, "Produce"`, "column 8"}},
		{`UNSUPPORTED_VERSION in errors`, []string{`UNSUPPORTED_VERSION is a Kafka error's name: write it in quotes, "UNSUPPORTED_VERSION"`}},
		{`kind != noResponse`, []string{`noResponse is an exchange's kind: write it in quotes, "noResponse"`}},
		// tcpdump syntax is -f's, said after expr's own message.
		{`port 9092`, []string{`unexpected token`, "\nkwire: 'port 9092' is a capture filter in tcpdump syntax: give it with -f"}},
		{`host 10.0.0.5 and tcp port 9092`, []string{"'host 10.0.0.5 and tcp port 9092' is a capture filter in tcpdump syntax: give it with -f"}},
		// Other languages' operators: the one to write.
		{`api = "Fetch"`, []string{`unexpected token Operator("="): compare with == (and >=, <=, != as they are) (line 1, column 5)`}},
		{`api == "Fetch" & latencyMs > 1`, []string{`unexpected token Operator("&"): write && (or and) for both to hold`}},
		{`api == "Fetch" AND latencyMs > 1`, []string{`unexpected token Identifier("AND"): write && (or and, in lower case)`}},
		{`api == "Fetch" OR latencyMs > 1`, []string{`unexpected token Identifier("OR"): write || (or or, in lower case)`}},
		{`latency_ms > 5`, []string{"latency_ms is now latencyMs"}},
		{`client_id == "x" || request_size > 3`, []string{"client_id is now clientId"}},
	}
	for _, tt := range tests {
		_, _, err := compileFilter(tt.src)
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

// TestFilterBodyPathsKnown: paths that some API's schema has, in any
// version, compile (Produce's acks; Fetch's; a response header; through
// ?. and indexes; a closure's own paths are not checked).
func TestFilterBodyPathsKnown(t *testing.T) {
	for _, src := range []string{
		`request.body.acks == 0`,
		`request.body.topicData[1].name == "audit"`,
		`request.body?.topics[0].partitions[0].fetchOffset > 0`,
		`response.body.responses[0].partitionResponses[0].errorCode != 0`,
		`response.header.correlationId == 1`,
		`request.body["transactionalId"] == "tx"`,
		`any(request.body.topicData, .name == "audit")`,
		`request.body.groupInstanceId == nil`,
	} {
		if _, bodies, err := compileFilter(src); err != nil || !bodies {
			t.Errorf("compileFilter(%q): bodies %v, %v", src, bodies, err)
		}
	}
}

// kexchange builds an exchange from kmsg messages, decoded as kwire
// decodes them (resp may be nil).
func kexchange(t *testing.T, req kmsg.Request, resp kmsg.Response) *dissect.Exchange {
	t.Helper()
	rt := protocol.DecodeBody(req.Key(), req.GetVersion(), false, req.AppendTo(nil))
	if rt.Err != nil {
		t.Fatalf("%T: %v", req, rt.Err)
	}
	ex := &dissect.Exchange{APIKey: req.Key(), APIVersion: req.GetVersion(), Kind: dissect.KindUnanswered,
		Request: &dissect.Frame{Tree: rt}}
	if resp != nil {
		resp.SetVersion(req.GetVersion())
		pt := protocol.DecodeBody(req.Key(), req.GetVersion(), true, resp.AppendTo(nil))
		if pt.Err != nil {
			t.Fatalf("%T: %v", resp, pt.Err)
		}
		ex.Response, ex.Kind = &dissect.Frame{Tree: pt}, dissect.KindPaired
	}
	return ex
}

func TestTopicIDs(t *testing.T) {
	// A Metadata response names topic "orders" with its ID; a later
	// Produce v13 request names the topic by ID only.
	id := [16]byte{0xb2, 0x1e, 0x43, 0x45, 0x03, 0x19, 0x48, 0x59, 0xbb, 0x62, 0xc5, 0xb5, 0x30, 0xd8, 0xa2, 0x59}
	other := [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	names := facts.NewNames()
	mreq := kmsg.NewPtrMetadataRequest()
	mreq.Version = 12
	mresp := kmsg.NewPtrMetadataResponse()
	mt := kmsg.NewMetadataResponseTopic()
	mt.Topic, mt.TopicID = kmsg.StringPtr("orders"), id
	mresp.Topics = append(mresp.Topics, mt)
	meta := kexchange(t, mreq, mresp)
	names.Resolve(meta.Facts())
	if got, ok := names.Name(id); !ok || got != "orders" {
		t.Fatalf("learnt %q, want sh5DRQMZSFm7YsW1MNiiWQ → orders", got)
	}
	prod := kmsg.NewPtrProduceRequest()
	prod.Version = 13
	for _, tid := range [][16]byte{id, other, {}} {
		x := kmsg.NewProduceRequestTopic()
		x.TopicID = tid
		prod.Topics = append(prod.Topics, x)
	}
	ex := kexchange(t, prod, nil)
	names.Resolve(ex.Facts())
	f := fieldsOf(ex, names, false, false)
	if got, want := f.Topics, []string{"orders", "AQIDBAUGBwgJCgsMDQ4PEA", "(zero topic ID)"}; !slices.Equal(got, want) {
		t.Errorf("topics = %q, want %q (resolved name, the unknown ID, the zero ID: Kafka's no ID, said as such)", got, want)
	}
	// Beside a name, the zero ID is "no ID": not a topic.
	mreq2 := kmsg.NewPtrMetadataRequest()
	mreq2.Version = 12
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr("orders")
	mreq2.Topics = append(mreq2.Topics, rt)
	exMeta := kexchange(t, mreq2, nil)
	names.Resolve(exMeta.Facts())
	if got, want := fieldsOf(exMeta, names, false, false).Topics, []string{"orders"}; !slices.Equal(got, want) {
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
	prod7 := kmsg.NewPtrProduceRequest()
	prod7.Version = 7
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = "orders"
	prod7.Topics = append(prod7.Topics, pt)
	ex7 := kexchange(t, prod7, nil)
	names.Resolve(ex7.Facts())
	if fl := (&exchangeFilter{stream: -1, topics: []string{"sh5DRQMZSFm7YsW1MNiiWQ"}}); !fl.match(ex7, fieldsOf(ex7, names, false, false)) {
		t.Error("--topic with the ID of orders does not match a Produce v7 naming orders")
	}
	if fl := (&exchangeFilter{stream: -1, topics: []string{"sh5DRQMZSFm7YsW1MNiiWQ"}}); fl.match(ex7, fieldsOf(ex7, facts.NewNames(), false, false)) {
		t.Error("--topic with an ID not learnt matches a Produce v7 naming orders")
	}
}

// TestFilterKinds checks that --filter's kinds are --json's, and that the
// old spelling no-response still works.
func TestFilterKinds(t *testing.T) {
	ex := testExchange()
	ex.Kind = dissect.KindNoResponse
	f := fieldsOf(ex, nil, true, false)
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
		`clientId == "no-response" || true`:      true,
		`kind == "unanswered" || kind == "sasl"`: false,
	} {
		p, _ := mustCompile(t, src)
		fl := &exchangeFilter{stream: -1, program: p}
		if got := fl.match(ex, f); got != want {
			t.Errorf("%s: match = %v, want %v", src, got, want)
		}
	}
	for _, k := range []dissect.Kind{dissect.KindPaired, dissect.KindNoResponse, dissect.KindUnanswered, dissect.KindOrphan, dissect.KindSASL} {
		ex.Kind = k
		if got, want := fieldsOf(ex, nil, true, false).Kind, render.NewExchangeDoc(ex, render.Options{}).Kind; got != want {
			t.Errorf("kind %v: --filter's %q, --json's %q", k, got, want)
		}
	}
}
