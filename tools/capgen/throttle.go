package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Quota throttling (throttle.pcap). kfake keeps client quotas but never
// enforces them, so capgen's connection shaper does what a broker over
// quota does: it sets ThrottleMillis in the responses of the throttled
// clients and then stops reading their connection for that long (KIP-219:
// the broker answers at once and mutes the channel); a throttled Fetch is
// answered empty, as Kafka's throttled fetch responses are. A kfake
// control hook answers one CreateTopics with THROTTLING_QUOTA_EXCEEDED
// (KIP-599's controller mutation quota).

const (
	throttleTopic      = "capgen-throttle"
	throttleProduceMs  = 300
	throttleFetchMs    = 200
	throttleFetches    = 3
	throttleCreateMs   = 500
	throttleRecords    = 8
	throttledProducer  = "capgen-kgo-throttled-producer"
	throttledConsumer  = "capgen-kgo-throttled-consumer"
	throttleAdmin      = "capgen-kgo-throttle-admin"
	throttleQuotaTopic = "capgen-throttle-quota"
)

// reqInfo is what the shaper read of a request.
type reqInfo struct {
	key, version int16
	corr         int32
	clientID     string
}

// shapeListener wraps kfake's accepted connections in shapeConns.
type shapeListener struct {
	net.Listener
	// rewrite may change a response; it returns how long to stop reading
	// the connection afterwards.
	rewrite func(req reqInfo, resp kmsg.Response) (mute time.Duration, changed bool)
}

func (l *shapeListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &shapeConn{Conn: c, l: l}, nil
}

// shapeConn passes requests through, notes their keys, versions and
// correlation IDs, and lets the listener rewrite the responses.
type shapeConn struct {
	net.Conn
	l *shapeListener

	mu        sync.Mutex
	pending   []reqInfo
	rbuf      []byte
	wbuf      []byte
	muteUntil time.Time
}

func (c *shapeConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	mute := time.Until(c.muteUntil)
	c.mu.Unlock()
	if mute > 0 {
		time.Sleep(mute)
	}
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.mu.Lock()
		c.rbuf = append(c.rbuf, p[:n]...)
		for len(c.rbuf) >= 4 {
			size := int(binary.BigEndian.Uint32(c.rbuf))
			if len(c.rbuf) < 4+size {
				break
			}
			c.noteRequest(c.rbuf[4 : 4+size])
			c.rbuf = c.rbuf[4+size:]
		}
		c.mu.Unlock()
	}
	return n, err
}

// noteRequest records a request that will be answered.
func (c *shapeConn) noteRequest(body []byte) {
	if len(body) < 10 {
		return
	}
	ri := reqInfo{key: int16(binary.BigEndian.Uint16(body)), version: int16(binary.BigEndian.Uint16(body[2:])),
		corr: int32(binary.BigEndian.Uint32(body[4:]))}
	rest := body[8:]
	if n := int(int16(binary.BigEndian.Uint16(rest))); n > 0 && 2+n <= len(rest) {
		ri.clientID = string(rest[2 : 2+n])
		rest = rest[2+n:]
	} else {
		rest = rest[2:]
	}
	if ri.key == int16(kmsg.Produce) {
		req := kmsg.NewPtrProduceRequest()
		req.SetVersion(ri.version)
		if req.IsFlexible() && len(rest) > 0 {
			rest = rest[1:]
		}
		if req.ReadFrom(rest) == nil && req.Acks == 0 {
			return // no response
		}
	}
	c.pending = append(c.pending, ri)
}

func (c *shapeConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wbuf = append(c.wbuf, p...)
	for len(c.wbuf) >= 4 {
		size := int(binary.BigEndian.Uint32(c.wbuf))
		if len(c.wbuf) < 4+size {
			break
		}
		frame := c.wbuf[:4+size]
		c.wbuf = c.wbuf[4+size:]
		out, mute := c.rewrite(frame)
		if _, err := c.Conn.Write(out); err != nil {
			return 0, err
		}
		if mute > 0 {
			c.muteUntil = time.Now().Add(mute)
		}
	}
	return len(p), nil
}

// rewrite hands the response in frame to the listener and re-encodes it
// if it changed.
func (c *shapeConn) rewrite(frame []byte) ([]byte, time.Duration) {
	if len(c.pending) == 0 || len(frame) < 8 {
		return frame, 0
	}
	ri := c.pending[0]
	c.pending = c.pending[1:]
	if int32(binary.BigEndian.Uint32(frame[4:])) != ri.corr {
		return frame, 0
	}
	req := kmsg.RequestForKey(ri.key)
	if req == nil {
		return frame, 0
	}
	req.SetVersion(ri.version)
	resp := req.ResponseKind()
	resp.SetVersion(ri.version)
	body := frame[8:]
	flexible := resp.IsFlexible() && ri.key != int16(kmsg.ApiVersions)
	if flexible {
		if len(body) == 0 || body[0] != 0 {
			return frame, 0
		}
		body = body[1:]
	}
	if err := resp.ReadFrom(body); err != nil {
		return frame, 0
	}
	mute, changed := c.l.rewrite(ri, resp)
	if !changed {
		return frame, mute
	}
	out := binary.BigEndian.AppendUint32(make([]byte, 4, len(frame)), uint32(ri.corr))
	if flexible {
		out = append(out, 0)
	}
	out = resp.AppendTo(out)
	binary.BigEndian.PutUint32(out, uint32(len(out)-4))
	return out, mute
}

// throttleHook logs kgo's own account of the throttles it honoured.
type throttleHook struct {
	x        *expectation
	clientID string
}

func (h throttleHook) OnBrokerThrottle(_ kgo.BrokerMetadata, d time.Duration, after bool) {
	h.x.logf(h.clientID, "kgo: broker throttled us for %v (throttled after the response: %v)", d, after)
}

func runThrottle(ports []int, x *expectation) error {
	port := ports[0]
	produceIn := &expectInjection{Kind: "throttle", API: "Produce", ClientID: throttledProducer, ThrottleMs: throttleProduceMs,
		Note: "ThrottleMillis set in every Produce response to this client, then its connection is not read for that long (KIP-219)"}
	fetchIn := &expectInjection{Kind: "throttle", API: "Fetch", ClientID: throttledConsumer, ThrottleMs: throttleFetchMs,
		Note: fmt.Sprintf("the first %d Fetch responses to this client: ThrottleMillis set and the response emptied (no partitions), as a throttled Kafka fetch is; connection muted for that long", throttleFetches)}
	createIn := &expectInjection{Kind: "error", API: "CreateTopics", ClientID: throttleAdmin, ErrorCode: kerr.ThrottlingQuotaExceeded.Code,
		Error: "THROTTLING_QUOTA_EXCEEDED", ThrottleMs: throttleCreateMs, Topic: throttleQuotaTopic,
		Note: "kfake control hook: the first CreateTopics of this topic is refused with THROTTLING_QUOTA_EXCEEDED and ThrottleMillis (KIP-599)"}
	x.inject(produceIn)
	x.inject(fetchIn)
	x.inject(createIn)
	var mu sync.Mutex
	fetches := 0
	rewrite := func(ri reqInfo, resp kmsg.Response) (time.Duration, bool) {
		switch r := resp.(type) {
		case *kmsg.ProduceResponse:
			if ri.clientID != throttledProducer {
				return 0, false
			}
			r.ThrottleMillis = throttleProduceMs
			x.count(produceIn)
			x.logf("capgen-broker", "Produce corr %d to %s: ThrottleMillis %d", ri.corr, ri.clientID, throttleProduceMs)
			return throttleProduceMs * time.Millisecond, true
		case *kmsg.FetchResponse:
			if ri.clientID != throttledConsumer {
				return 0, false
			}
			mu.Lock()
			fetches++
			n := fetches
			mu.Unlock()
			if n > throttleFetches {
				return 0, false
			}
			r.ThrottleMillis = throttleFetchMs
			r.Topics = nil
			x.count(fetchIn)
			x.logf("capgen-broker", "Fetch corr %d to %s: emptied, ThrottleMillis %d", ri.corr, ri.clientID, throttleFetchMs)
			return throttleFetchMs * time.Millisecond, true
		}
		return 0, false
	}
	c, err := newCluster(port, kfake.SeedTopics(1, throttleTopic), kfake.ListenFn(func(network, address string) (net.Listener, error) {
		ln, err := net.Listen(network, address)
		if err != nil {
			return nil, err
		}
		return &shapeListener{Listener: ln, rewrite: rewrite}, nil
	}))
	if err != nil {
		return err
	}
	defer c.Close()
	refused := false
	c.ControlKey(int16(kmsg.CreateTopics), func(r kmsg.Request) (kmsg.Response, error, bool) {
		req := r.(*kmsg.CreateTopicsRequest)
		if refused || len(req.Topics) != 1 || req.Topics[0].Topic != throttleQuotaTopic {
			c.KeepControl()
			return nil, nil, false
		}
		refused = true
		resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)
		resp.ThrottleMillis = throttleCreateMs
		rt := kmsg.NewCreateTopicsResponseTopic()
		rt.Topic = throttleQuotaTopic
		rt.ErrorCode = kerr.ThrottlingQuotaExceeded.Code
		rt.ErrorMessage = kmsg.StringPtr("The throttling quota has been exceeded.")
		resp.Topics = append(resp.Topics, rt)
		x.count(createIn)
		x.logf("capgen-broker", "CreateTopics %s: THROTTLING_QUOTA_EXCEEDED, ThrottleMillis %d", throttleQuotaTopic, throttleCreateMs)
		return resp, nil, true
	})
	x.Brokers = []expectBroker{{0, addr(port)}}
	x.About = fmt.Sprintf("Quota throttling: every Produce response to %s carries ThrottleMillis %d and the broker then stops reading its connection "+
		"for as long; the first %d Fetch responses to %s are empty with ThrottleMillis %d; %s's first CreateTopics of %s is refused with "+
		"THROTTLING_QUOTA_EXCEEDED (89) and ThrottleMillis %d, and it retries. %s is never throttled.",
		throttledProducer, throttleProduceMs, throttleFetches, throttledConsumer, throttleFetchMs, throttleAdmin, throttleQuotaTopic,
		throttleCreateMs, "capgen-kgo-unthrottled-producer")
	x.Varies = []string{"timestamps and TCP ports", "the number of Fetch requests"}
	seed := kgo.SeedBrokers(addr(port))
	ctx, cancel := withTimeout(time.Minute)
	defer cancel()

	for _, id := range []string{throttledProducer, "capgen-kgo-unthrottled-producer"} {
		x.client(id, "franz-go kgo v1.22.3", fmt.Sprintf("produces %d records, one Produce request each", throttleRecords))
		cl, err := kgo.NewClient(seed, kgo.ClientID(id), kgo.DefaultProduceTopic(throttleTopic),
			kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerLinger(0), kgo.WithHooks(throttleHook{x, id}))
		if err != nil {
			return err
		}
		for i := 0; i < throttleRecords; i++ {
			t := time.Now()
			if err := cl.ProduceSync(ctx, &kgo.Record{Key: []byte(fmt.Sprintf("%s-%d", id, i)), Value: []byte("throttled?")}).FirstErr(); err != nil {
				cl.Close()
				return err
			}
			x.logf(id, "record %d acknowledged after %v", i, time.Since(t).Round(time.Millisecond))
		}
		cl.Close()
	}
	x.client(throttledConsumer, "franz-go kgo v1.22.3", "reads the records back (no group, no fetch sessions)")
	keys, err := consumeKeys(ctx, 2*throttleRecords, seed, kgo.ClientID(throttledConsumer), kgo.ConsumeTopics(throttleTopic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableFetchSessions(), kgo.FetchMaxWait(500*time.Millisecond),
		kgo.WithHooks(throttleHook{x, throttledConsumer}))
	if err != nil {
		return err
	}
	x.logf(throttledConsumer, "read %d records", len(keys))

	x.client(throttleAdmin, "franz-go kgo v1.22.3 (kadm)", "creates "+throttleQuotaTopic+", retrying after THROTTLING_QUOTA_EXCEEDED")
	acl, err := kgo.NewClient(seed, kgo.ClientID(throttleAdmin), kgo.WithHooks(throttleHook{x, throttleAdmin}))
	if err != nil {
		return err
	}
	defer acl.Close()
	adm := kadm.NewClient(acl)
	for try := 1; ; try++ {
		res, err := adm.CreateTopics(ctx, 1, 1, nil, throttleQuotaTopic)
		if err != nil {
			return err
		}
		terr := res[throttleQuotaTopic].Err
		x.logf(throttleAdmin, "CreateTopics %s, try %d: %v", throttleQuotaTopic, try, terr)
		if terr == nil {
			break
		}
		if !errors.Is(terr, kerr.ThrottlingQuotaExceeded) || try == 3 {
			return fmt.Errorf("create %s: %w", throttleQuotaTopic, terr)
		}
		time.Sleep(throttleCreateMs * time.Millisecond)
	}
	if produceIn.Count != throttleRecords || fetchIn.Count != throttleFetches || createIn.Count != 1 {
		return fmt.Errorf("throttled %d produces, %d fetches, %d creates; want %d, %d, 1", produceIn.Count, fetchIn.Count, createIn.Count,
			throttleRecords, throttleFetches)
	}
	x.requests("Produce v13", "Fetch v18", "CreateTopics v7")
	x.Wire.ThrottledResponses = map[string]int{"Produce": throttleRecords, "Fetch": throttleFetches, "CreateTopics": 1}
	x.Wire.Errors["CreateTopics: THROTTLING_QUOTA_EXCEEDED (89)"] = 1
	x.Wire.NoOtherErrors = true
	return nil
}
