package tlsdec

import (
	"bytes"
	"crypto/tls"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// Hostile and broken TLS: no panic, bounded memory, the right event, and
// never a byte of plaintext that the sender did not send.

// meter is an Options.Reserve that tracks what a Conn holds.
type meter struct{ cur, peak int64 }

func (m *meter) reserve(n int64) bool {
	m.cur += n
	m.peak = max(m.peak, m.cur)
	return true
}

// perConnBound is what one Conn may hold: a record and a handshake
// message per direction.
const perConnBound = 2 * (MaxRecord + maxHandshake + 4)

// goSession records one session of version (and suite, 0 for Go's
// choice).
func goSession(t *testing.T, version uint16, suite uint16) ([]pkt, *KeyLog) {
	t.Helper()
	rec := &recording{}
	kl := &KeyLog{}
	c, s := configs(t, kl, version, suite)
	runSession(t, rec, c, s, nil)
	return rec.pkts, kl
}

// isPrefix checks that what was delivered is a prefix of what was sent.
func isPrefix(t *testing.T, col *collector) {
	t.Helper()
	for d := range Dir(2) {
		if !bytes.HasPrefix(wantStream(d), col.pt[d]) {
			t.Errorf("dir %d: %d bytes delivered that are not what was sent", d, len(col.pt[d]))
		}
	}
}

func replayMeter(t *testing.T, pkts []pkt, opts Options) *collector {
	t.Helper()
	m := &meter{}
	opts.Reserve = m.reserve
	col := replay(pkts, opts)
	if m.cur != 0 {
		t.Errorf("%d bytes still reserved after Close", m.cur)
	}
	if m.peak > perConnBound {
		t.Errorf("peak %d bytes held, over %d", m.peak, perConnBound)
	}
	return col
}

func TestOversizedLength(t *testing.T) {
	pkts := []pkt{{0, []byte{ctHandshake, 3, 1, 0xff, 0xff, 1, 2, 3}, 1}}
	col := replayMeter(t, pkts, Options{})
	ev := col.event(EventMalformed)
	if ev == nil || !strings.Contains(ev.Detail, "65535 over the maximum") {
		t.Fatalf("events %s", describe(col.events))
	}
	// Not a TLS header at all.
	col = replayMeter(t, []pkt{{1, []byte("GET / HTTP/1.1\r\n"), 1}}, Options{})
	if ev := col.event(EventMalformed); ev == nil || !strings.Contains(ev.Detail, "not a TLS record header") {
		t.Fatalf("events %s", describe(col.events))
	}
}

func TestTruncatedSessions(t *testing.T) {
	for _, v := range []struct{ version, suite uint16 }{{tls.VersionTLS13, 0}, {tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA}} {
		pkts, kl := goSession(t, v.version, v.suite)
		for cut := 1; cut < len(pkts); cut += 3 {
			// Cut inside the packet too.
			part := append([]pkt(nil), pkts[:cut]...)
			last := part[len(part)-1]
			part[len(part)-1] = pkt{last.dir, last.data[:len(last.data)/2], last.frame}
			col := replayMeter(t, part, Options{Keys: kl})
			isPrefix(t, col)
		}
	}
}

func TestRecordsBeforeHandshake(t *testing.T) {
	pkts, kl := goSession(t, tls.VersionTLS13, 0)
	// Start the capture after the handshake: at the first packet of the
	// 40 kB message (a record header lands somewhere in it), or on a
	// record boundary.
	for _, from := range []int{len(pkts) / 2, len(pkts) - 4} {
		col := replayMeter(t, resync(pkts[from:]), Options{Keys: kl})
		if len(col.pt[0])+len(col.pt[1]) != 0 {
			t.Errorf("from %d: plaintext without a handshake", from)
		}
		if col.event(EventNoHandshake) == nil && col.event(EventMalformed) == nil {
			t.Errorf("from %d: events %s", from, describe(col.events))
		}
	}
}

// resync starts each direction of pkts at its first record header, as a
// capture starting mid-connection at a record boundary would.
func resync(pkts []pkt) []pkt {
	var out []pkt
	started := [2]bool{}
	for _, p := range pkts {
		if !started[p.dir] {
			i := bytes.Index(p.data, []byte{ctApplicationData, 3, 3})
			if i < 0 {
				continue
			}
			p.data = p.data[i:]
			started[p.dir] = true
		}
		out = append(out, p)
	}
	return out
}

func TestGarbageAfterHandshake(t *testing.T) {
	pkts, kl := goSession(t, tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256)
	// Corrupt one byte of the client's 40 kB message: that record fails,
	// the rest of the direction is lost, the server's side goes on.
	bad := corrupt(pkts, 0, 200)
	col := replayMeter(t, bad, Options{Keys: kl})
	isPrefix(t, col)
	if ev := col.event(EventAuthFailed); ev == nil || ev.Dir != 0 {
		t.Fatalf("events %s", describe(col.events))
	}
	if ev := col.event(EventUndecrypted); ev == nil || ev.Bytes <= 0 {
		t.Errorf("no EventUndecrypted: %s", describe(col.events))
	}
	if col.lost[0] == 0 {
		t.Error("the failure was not reported as lost")
	}
	if !bytes.Equal(col.pt[1], wantStream(1)) {
		t.Error("the server's direction suffered from the client's corruption")
	}
	// Random bytes after the handshake instead of records.
	var junk []pkt
	for _, p := range pkts {
		junk = append(junk, p)
		if p.dir == 1 && len(junk) > 12 {
			break
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	g := make([]byte, 5000)
	for i := range g {
		g[i] = byte(r.Uint32())
	}
	junk = append(junk, pkt{0, g, 999})
	col = replayMeter(t, junk, Options{Keys: kl})
	isPrefix(t, col)
	if col.event(EventMalformed) == nil && col.event(EventAuthFailed) == nil {
		t.Errorf("garbage: %s", describe(col.events))
	}
}

// corrupt flips a byte of the nth packet of dir whose payload is over
// 1000 bytes.
func corrupt(pkts []pkt, dir Dir, at int) []pkt {
	out := make([]pkt, len(pkts))
	copy(out, pkts)
	n := 0
	for i, p := range out {
		if p.dir == dir && len(p.data) > 1000 {
			n++
			if n == 2 {
				d := bytes.Clone(p.data)
				d[at] ^= 0x40
				out[i].data = d
				break
			}
		}
	}
	return out
}

func TestWrongAndMissingKey(t *testing.T) {
	for _, v := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		pkts, kl := goSession(t, v, 0)
		// A wrong key: every secret with a bit flipped.
		var wrong KeyLog
		for cr, s := range kl.m {
			w := &Secrets{}
			for dst, src := range map[*[]byte][]byte{&w.Master: s.Master, &w.ClientHandshake: s.ClientHandshake,
				&w.ServerHandshake: s.ServerHandshake, &w.ClientTraffic: s.ClientTraffic, &w.ServerTraffic: s.ServerTraffic} {
				if src != nil {
					*dst = bytes.Clone(src)
					(*dst)[0] ^= 1
				}
			}
			wrong.m = map[[32]byte]*Secrets{cr: w}
		}
		col := replayMeter(t, pkts, Options{Keys: &wrong})
		if ev := col.event(EventAuthFailed); ev == nil || !strings.Contains(ev.Detail, "key logged for this client random is wrong") {
			t.Errorf("%s wrong key: %s", VersionName(v), describe(col.events))
		}
		if len(col.pt[0])+len(col.pt[1]) != 0 {
			t.Errorf("%s: plaintext with a wrong key", VersionName(v))
		}
		// No key: another connection's key log.
		_, other := goSession(t, v, 0)
		col = replayMeter(t, pkts, Options{Keys: other})
		ev := col.event(EventNoKey)
		if ev == nil || !strings.Contains(ev.Detail, "(1 key loaded)") || ev.Info == nil || ev.Info.SNI != "broker.test" {
			t.Errorf("%s no key: %s", VersionName(v), describe(col.events))
		}
		if len(col.pt[0])+len(col.pt[1]) != 0 || col.event(EventDecrypting) != nil {
			t.Errorf("%s: plaintext without a key", VersionName(v))
		}
	}
}

// TestWaitForKeys: in live capture the key log line may come after the
// records; with Wait the records are held and decrypted once it does.
func TestWaitForKeys(t *testing.T) {
	for _, v := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		pkts, kl := goSession(t, v, 0)
		var late KeyLog
		col := &collector{}
		m := &meter{}
		c := NewConn(Options{Keys: &late, Wait: true, Reserve: m.reserve}, col)
		for i, p := range pkts {
			if i == len(pkts)/2 {
				for cr, s := range kl.m {
					late.mu.Lock()
					late.m = map[[32]byte]*Secrets{cr: s}
					late.mu.Unlock()
				}
			}
			c.Data(p.dir, p.data, Mark{Frame: p.frame, Time: time.Unix(p.frame, 0)})
		}
		c.Close()
		checkSession(t, col, pkts)
		if m.cur != 0 {
			t.Errorf("%d bytes reserved after Close", m.cur)
		}
		// The key never comes: reported at Close.
		col = replay(pkts, Options{Keys: &KeyLog{}, Wait: true})
		if col.event(EventNoKey) == nil || len(col.pt[0]) != 0 {
			t.Errorf("%s: %s", VersionName(v), describe(col.events))
		}
		// The memory bound refuses to hold more: reported at once.
		col = replay(pkts, Options{Keys: &KeyLog{}, Wait: true, Reserve: func(n int64) bool { return n < 0 || n < 100 }})
		if col.event(EventNoKey) == nil {
			t.Errorf("%s bounded: %s", VersionName(v), describe(col.events))
		}
	}
}

// TestGapInsideRecord: bytes lost inside a record whose end is known
// lose that record only; the next ones decrypt.
func TestGapInsideRecord(t *testing.T) {
	pkts, kl := goSession(t, tls.VersionTLS13, 0)
	col := &collector{}
	c := NewConn(Options{Keys: kl}, col)
	n := 0
	for _, p := range pkts {
		if p.dir == 0 && len(p.data) == 700 {
			n++
			if n == 2 { // inside the 40 kB message's records
				c.Data(p.dir, p.data[:100], Mark{Frame: p.frame})
				c.Gap(p.dir, 500, time.Time{})
				c.Data(p.dir, p.data[600:], Mark{Frame: p.frame})
				continue
			}
		}
		c.Data(p.dir, p.data, Mark{Frame: p.frame})
	}
	c.Close()
	if col.lost[0] != 1 || col.event(EventGapLost) != nil {
		t.Fatalf("lost %v, events %s", col.lost, describe(col.events))
	}
	want := wantStream(0)
	got := col.pt[0]
	// What follows the lost record is there: the last messages whole.
	tail := frame(messages[len(messages)-1])
	if !bytes.HasSuffix(got, tail) || len(got) >= len(want) || len(got) < len(want)-MaxRecord {
		t.Errorf("after the gap: %d of %d bytes", len(got), len(want))
	}
	if !bytes.Equal(col.pt[1], wantStream(1)) {
		t.Error("server direction")
	}
}

func FuzzConn(f *testing.F) {
	f.Add([]byte{ctHandshake, 3, 1, 0, 4, hsClientHello, 0, 0, 0}, []byte{ctApplicationData, 3, 3, 0, 1, 0})
	f.Add([]byte{ctHandshake, 3, 3, 0x48, 0, 1}, []byte{ctAlert, 3, 3, 0, 2, 2, 40})
	f.Fuzz(func(t *testing.T, a, b []byte) {
		m := &meter{}
		col := &collector{}
		c := NewConn(Options{Keys: &KeyLog{}, Reserve: m.reserve, Wait: len(a)%2 == 0}, col)
		for i := 0; i < len(a) || i < len(b); i += 7 {
			if i < len(a) {
				c.Data(0, a[i:min(i+7, len(a))], Mark{})
			}
			if i < len(b) {
				c.Data(1, b[i:min(i+7, len(b))], Mark{})
			}
			if i == 14 {
				c.Gap(0, 3, time.Time{})
			}
		}
		c.Close()
		if m.cur != 0 || m.peak > perConnBound {
			t.Fatalf("reserved %d, peak %d", m.cur, m.peak)
		}
		if len(col.pt[0])+len(col.pt[1]) > 0 {
			t.Fatal("plaintext without keys")
		}
	})
}
