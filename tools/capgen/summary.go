package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// This file reads back a capture and summarizes its Kafka exchanges, to
// check a capture and to write pcaps/README.md. It assumes what capgen's
// captures are: Ethernet, IPv4, loopback, brokers on ports 19000-19999, no
// loss. kwire itself is the real dissector; this is a checker.

// segment is one TCP payload at a sequence number relative to the stream,
// with its capture time.
type segment struct {
	seq  uint32
	data []byte
	ts   time.Time
}

// halfStream is one direction of a TCP connection.
type halfStream struct {
	isn    uint32
	hasISN bool
	segs   []segment
}

// byteTime says when the stream's bytes from off on were captured.
type byteTime struct {
	off int
	ts  time.Time
}

// bytes orders the segments and drops retransmitted overlap. It returns
// when each run of bytes was captured, and counts the segments whose bytes
// had all been captured before (retransmissions) and those that came after
// a later segment (out of order: the fill of a hole left by a segment lost
// before the capture point).
func (h *halfStream) bytes() (out []byte, times []byteTime, gaps, retrans, late int) {
	maxEnd := uint32(0)
	for _, s := range h.segs { // capture order
		end := s.seq + uint32(len(s.data))
		if s.seq < maxEnd && end > maxEnd {
			retrans++ // partly new, partly sent before
		} else if end <= maxEnd {
			if h.covered(s) {
				retrans++
			} else {
				late++
			}
		}
		if end > maxEnd {
			maxEnd = end
		}
	}
	segs := append([]segment(nil), h.segs...)
	sort.SliceStable(segs, func(i, j int) bool { return segs[i].seq < segs[j].seq })
	next := uint32(0)
	for _, s := range segs {
		switch {
		case s.seq+uint32(len(s.data)) <= next:
			continue
		case s.seq < next:
			s.data = s.data[next-s.seq:]
		case s.seq > next:
			gaps++
		}
		times = append(times, byteTime{len(out), s.ts})
		out = append(out, s.data...)
		next = s.seq + uint32(len(s.data))
	}
	return out, times, gaps, retrans, late
}

// covered reports whether every byte of s was in a segment captured
// before it.
func (h *halfStream) covered(s segment) bool {
	end := s.seq + uint32(len(s.data))
	for at := s.seq; at < end; {
		moved := false
		for _, o := range h.segs {
			if o.ts.After(s.ts) || (o.ts.Equal(s.ts) && o.seq == s.seq && len(o.data) == len(s.data)) {
				break
			}
			oe := o.seq + uint32(len(o.data))
			if o.seq <= at && oe > at {
				at = oe
				moved = true
			}
		}
		if !moved {
			return false
		}
	}
	return true
}

// copies counts the captured segments that overlap [seq, seq+n).
func (h *halfStream) copies(seq uint32, n int) int {
	c := 0
	for _, s := range h.segs {
		if s.seq < seq+uint32(n) && s.seq+uint32(len(s.data)) > seq {
			c++
		}
	}
	return c
}

// timeAt returns when the byte at off was captured.
func timeAt(times []byteTime, off int) time.Time {
	var t time.Time
	for _, bt := range times {
		if bt.off > off {
			break
		}
		t = bt.ts
	}
	return t
}

// lastTime returns when the last of the bytes [off, off+n) was captured.
func lastTime(times []byteTime, off, n int) time.Time {
	t := timeAt(times, off)
	for _, bt := range times {
		if bt.off > off && bt.off < off+n && bt.ts.After(t) {
			t = bt.ts
		}
	}
	return t
}

type conn struct {
	client, broker string
	up, down       halfStream
	order          int
	// clientID is the client ID of the connection's first request,
	// firstAPI that request's API name.
	clientID, firstAPI string
	// advertised is what the connection's ApiVersions response said:
	// API key → max version; nil without one.
	advertised map[int16]int16
}

// readPcap reassembles the capture's TCP connections.
func readPcap(file string) ([]*conn, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	if len(b) < 24 {
		return nil, errors.New("short pcap header")
	}
	var bo binary.ByteOrder = binary.LittleEndian
	magic := binary.LittleEndian.Uint32(b)
	switch magic {
	case 0xa1b2c3d4, 0xa1b23c4d:
	default:
		bo = binary.BigEndian
		magic = binary.BigEndian.Uint32(b)
	}
	nanos := magic == 0xa1b23c4d
	if bo.Uint32(b[20:]) != 1 {
		return nil, fmt.Errorf("link type %d, want Ethernet", bo.Uint32(b[20:]))
	}
	conns := map[string]*conn{}
	var list []*conn
	for off := 24; off+16 <= len(b); {
		incl := int(bo.Uint32(b[off+8:]))
		sec, frac := int64(bo.Uint32(b[off:])), int64(bo.Uint32(b[off+4:]))
		if !nanos {
			frac *= 1000
		}
		ts := time.Unix(sec, frac)
		off += 16
		if incl > len(b)-off {
			return nil, errors.New("truncated packet record")
		}
		pkt := b[off : off+incl]
		off += incl
		if len(pkt) < 14+20 || binary.BigEndian.Uint16(pkt[12:]) != 0x0800 {
			continue
		}
		ip := pkt[14:]
		ihl := int(ip[0]&0xf) * 4
		total := int(binary.BigEndian.Uint16(ip[2:]))
		if ip[9] != 6 || ihl < 20 || total > len(ip) || total < ihl+20 {
			continue
		}
		tcp := ip[ihl:total]
		sport, dport := binary.BigEndian.Uint16(tcp), binary.BigEndian.Uint16(tcp[2:])
		seq := binary.BigEndian.Uint32(tcp[4:])
		doff := int(tcp[12]>>4) * 4
		flags := tcp[13]
		if doff < 20 || doff > len(tcp) {
			continue
		}
		payload := tcp[doff:]
		toBroker := dport >= 19000 && dport < 20000
		cport, bport := sport, dport
		if !toBroker {
			cport, bport = dport, sport
		}
		key := fmt.Sprintf("%d-%d", cport, bport)
		c := conns[key]
		if c == nil {
			c = &conn{client: fmt.Sprint(cport), broker: fmt.Sprint(bport), order: len(list)}
			conns[key] = c
			list = append(list, c)
		}
		h := &c.down
		if toBroker {
			h = &c.up
		}
		syn := flags&0x02 != 0
		if syn && !h.hasISN {
			h.isn, h.hasISN = seq+1, true
		}
		if len(payload) == 0 {
			continue
		}
		if !h.hasISN {
			h.isn, h.hasISN = seq, true
		}
		h.segs = append(h.segs, segment{seq - h.isn, append([]byte(nil), payload...), ts})
	}
	return list, nil
}

// frames splits a byte stream into 4-byte-length-prefixed bodies, with
// each frame's offset in the stream.
func frames(b []byte) (out [][]byte, offs []int, rest int) {
	off := 0
	for len(b) >= 4 {
		n := int(binary.BigEndian.Uint32(b))
		if n < 0 || n > len(b)-4 {
			break
		}
		out = append(out, b[4:4+n])
		offs = append(offs, off)
		b = b[4+n:]
		off += 4 + n
	}
	return out, offs, len(b)
}

// exchange is one request with its response (nil when none came).
type exchange struct {
	conn         *conn
	clientID     string
	key, version int16
	corr         int32
	req          kmsg.Request
	resp         kmsg.Response
	// reqEnd is when the request's last byte was captured, respStart
	// when the response's first byte was.
	reqEnd, respStart time.Time
}

// summary is what one capture holds.
type summary struct {
	conns, requests, responses int
	apis                       map[string]int // "Produce v9"
	errs                       map[string]int // "Produce: UNKNOWN_TOPIC_ID (100)"
	codecs                     map[string]int // batch codec → batches
	clientIDs                  map[string]bool
	notes                      []string
	list                       []*conn
	exchanges                  []*exchange
	// retrans counts segments captured twice, late the segments that
	// filled a hole after later ones (lost before the capture point).
	retrans, late int
}

func (s *summary) note(format string, args ...any) {
	s.notes = append(s.notes, fmt.Sprintf(format, args...))
}

var codecNames = []string{"none", "gzip", "snappy", "lz4", "zstd"}

// summarize reads file and pairs every request with its response.
func summarize(file string) (*summary, error) {
	conns, err := readPcap(file)
	if err != nil {
		return nil, err
	}
	s := &summary{apis: map[string]int{}, errs: map[string]int{}, codecs: map[string]int{}, clientIDs: map[string]bool{}}
	s.conns = len(conns)
	s.list = conns
	for _, c := range conns {
		up, upTimes, gaps, r1, l1 := c.up.bytes()
		down, downTimes, gaps2, r2, l2 := c.down.bytes()
		s.retrans += r1 + r2
		s.late += l1 + l2
		if gaps+gaps2 > 0 {
			s.note("connection %s→%s: %d gaps", c.client, c.broker, gaps+gaps2)
		}
		reqs, reqOffs, restUp := frames(up)
		resps, respOffs, restDown := frames(down)
		if restUp > 0 || restDown > 0 {
			s.note("connection %s→%s: %d/%d bytes left after the last whole frame", c.client, c.broker, restUp, restDown)
		}
		t := frameTimes{up: upTimes, down: downTimes, reqOffs: reqOffs, respOffs: respOffs, reqs: reqs, resps: resps}
		s.pair(c, reqs, resps, t)
	}
	return s, nil
}

// frameTimes locates frames in their streams' capture times.
type frameTimes struct {
	up, down          []byteTime
	reqOffs, respOffs []int
	reqs, resps       [][]byte
}

func (s *summary) pair(c *conn, reqs, resps [][]byte, ft frameTimes) {
	ri := 0
	rawToken := false
	for i, body := range reqs {
		if rawToken {
			rawToken = false
			s.apis["(raw SASL token, after SaslHandshake v0)"]++
			if ri < len(resps) && len(resps[ri]) == 0 {
				ri++
				s.apis["(raw SASL token response, empty)"]++
			} else {
				s.note("connection %s→%s: raw SASL token not answered (connection closed)", c.client, c.broker)
			}
			continue
		}
		if len(body) < 8 {
			s.note("short request frame")
			continue
		}
		s.requests++
		key, ver := int16(binary.BigEndian.Uint16(body)), int16(binary.BigEndian.Uint16(body[2:]))
		corr := int32(binary.BigEndian.Uint32(body[4:]))
		name := kmsg.NameForKey(key)
		if name == "" {
			name = fmt.Sprintf("UNKNOWN(%d)", key)
		}
		s.apis[fmt.Sprintf("%s v%d", name, ver)]++
		ex := &exchange{conn: c, key: key, version: ver, corr: corr,
			reqEnd: lastTime(ft.up, ft.reqOffs[i], 4+len(body))}
		if c.firstAPI == "" {
			c.firstAPI = name
		}
		req := kmsg.RequestForKey(key)
		if req == nil {
			s.note("unknown API key %d", key)
			continue
		}
		req.SetVersion(ver)
		rd := body[8:]
		if len(rd) >= 2 {
			if n := int(int16(binary.BigEndian.Uint16(rd))); n >= 0 && 2+n <= len(rd) {
				s.clientIDs[string(rd[2:2+n])] = true
				ex.clientID = string(rd[2 : 2+n])
				if c.clientID == "" {
					c.clientID = ex.clientID
				}
				rd = rd[2+n:]
			} else {
				rd = rd[2:]
			}
		}
		if req.IsFlexible() && len(rd) > 0 {
			rd = rd[1:] // empty header tags in every capgen client
		}
		if err := req.ReadFrom(rd); err != nil {
			s.note("%s v%d request corr %d does not decode: %v", name, ver, corr, err)
		} else {
			s.records(name, req)
			ex.req = req
		}
		s.exchanges = append(s.exchanges, ex)
		if p, ok := req.(*kmsg.ProduceRequest); ok && p.Acks == 0 {
			s.apis["(Produce with acks=0: no response)"]++
			continue
		}
		if ri >= len(resps) {
			s.note("%s v%d corr %d on %s→%s: no response (connection closed)", name, ver, corr, c.client, c.broker)
			continue
		}
		resp := resps[ri]
		ex.respStart = timeAt(ft.down, ft.respOffs[ri])
		ri++
		if len(resp) < 4 || int32(binary.BigEndian.Uint32(resp)) != corr {
			s.note("%s v%d corr %d: response out of order", name, ver, corr)
			continue
		}
		s.responses++
		kresp := req.ResponseKind()
		kresp.SetVersion(ver)
		rb := resp[4:]
		if kresp.IsFlexible() && key != 18 && len(rb) > 0 {
			rb = rb[1:]
		}
		err := kresp.ReadFrom(rb)
		if key == 18 && (err != nil || reflect.ValueOf(kresp).Elem().FieldByName("ErrorCode").Int() == 35) {
			kresp = req.ResponseKind() // KIP-511: answered as v0
			kresp.SetVersion(0)
			err = kresp.ReadFrom(rb)
			s.apis["ApiVersions response downgraded to v0"]++
		}
		if err != nil {
			s.note("%s v%d response corr %d does not decode: %v", name, ver, corr, err)
			continue
		}
		s.records(name, kresp)
		ex.resp = kresp
		if av, ok := kresp.(*kmsg.ApiVersionsResponse); ok && av.ErrorCode == 0 {
			c.advertised = map[int16]int16{}
			for _, k := range av.ApiKeys {
				c.advertised[k.ApiKey] = k.MaxVersion
			}
		}
		s.errorCodes(name, reflect.ValueOf(kresp))
		s.details(req, kresp)
		if key == 17 && ver == 0 && reflect.ValueOf(kresp).Elem().FieldByName("ErrorCode").Int() == 0 {
			rawToken = true
		}
	}
	if ri < len(resps) {
		s.note("connection %s→%s: %d responses without a request", c.client, c.broker, len(resps)-ri)
	}
}

// errorCodes counts every nonzero ErrorCode field under v.
func (s *summary) errorCodes(api string, v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			s.errorCodes(api, v.Elem())
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			if f.Name == "ErrorCode" && f.Type.Kind() == reflect.Int16 {
				if code := int16(v.Field(i).Int()); code != 0 {
					name := fmt.Sprint(code)
					var ke *kerr.Error
					if errors.As(kerr.ErrorForCode(code), &ke) {
						name = ke.Message
					}
					s.errs[fmt.Sprintf("%s: %s (%d)", api, name, code)]++
				}
				continue
			}
			if f.IsExported() {
				s.errorCodes(api, v.Field(i))
			}
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() != reflect.Uint8 {
			for i := 0; i < v.Len(); i++ {
				s.errorCodes(api, v.Index(i))
			}
		}
	}
}

// records counts the codecs of the v2 batches in every Records field.
func (s *summary) records(api string, msg any) {
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				f := v.Type().Field(i)
				if (f.Name == "Records" || f.Name == "RecordBatches") && f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Uint8 {
					s.batches(api, v.Field(i).Bytes())
				} else if f.IsExported() {
					walk(v.Field(i))
				}
			}
		case reflect.Slice:
			if v.Type().Elem().Kind() != reflect.Uint8 {
				for i := 0; i < v.Len(); i++ {
					walk(v.Index(i))
				}
			}
		}
	}
	walk(reflect.ValueOf(msg))
}

func (s *summary) batches(api string, b []byte) {
	codec := func(attr uint16) string {
		if int(attr&7) < len(codecNames) {
			return codecNames[attr&7]
		}
		return fmt.Sprint(attr & 7)
	}
	for len(b) >= 18 {
		n := int(int32(binary.BigEndian.Uint32(b[8:])))
		if n < 6 || 12+n > len(b) {
			break // a partial trailing batch in a fetch
		}
		if magic := b[16]; magic < 2 {
			s.codecs[fmt.Sprintf("%s: %s magic %d message", api, codec(uint16(b[17])), magic)]++
		} else if n >= 49 {
			attr := binary.BigEndian.Uint16(b[21:])
			kind := "batch"
			if attr&0x20 != 0 {
				kind = "control batch"
			} else if attr&0x10 != 0 {
				kind = "transactional batch"
			}
			s.codecs[fmt.Sprintf("%s: %s %s", api, codec(attr), kind)]++
		}
		b = b[12+n:]
	}
}

func (s *summary) print(w io.Writer, file string) {
	st, _ := os.Stat(file)
	var size int64
	if st != nil {
		size = st.Size()
	}
	fmt.Fprintf(w, "%s: %d bytes, %d connections, %d requests, %d responses\n", file, size, s.conns, s.requests, s.responses)
	ids := make([]string, 0, len(s.clientIDs))
	for id := range s.clientIDs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	fmt.Fprintf(w, "  client IDs: %s\n", strings.Join(ids, ", "))
	for _, m := range []struct {
		title string
		m     map[string]int
	}{{"requests", s.apis}, {"error codes", s.errs}, {"record batches", s.codecs}} {
		keys := make([]string, 0, len(m.m))
		for k := range m.m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fmt.Fprintf(w, "  %s:\n", m.title)
		for _, k := range keys {
			fmt.Fprintf(w, "    %4d  %s\n", m.m[k], k)
		}
	}
	if s.retrans+s.late > 0 {
		fmt.Fprintf(w, "  TCP: %d segments captured again (retransmissions), %d filling a hole after later ones\n", s.retrans, s.late)
	}
	for _, n := range s.notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
}

// details counts a few protocol features worth checking by name.
func (s *summary) details(req kmsg.Request, resp kmsg.Response) {
	switch r := resp.(type) {
	case *kmsg.FetchResponse:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				if len(p.AbortedTransactions) > 0 {
					s.apis["(Fetch partition listing aborted transactions)"]++
				}
			}
		}
	case *kmsg.ConsumerGroupHeartbeatResponse:
		q := req.(*kmsg.ConsumerGroupHeartbeatRequest)
		s.apis[fmt.Sprintf("(ConsumerGroupHeartbeat with member epoch %d)", q.MemberEpoch)]++
	}
}
