package pcaps

// TestHexDumpBytes reads the frame bytes back out of `kwire read -x` and
// compares them with the frames the independent reading cut from the
// capture: the dump of each frame's own bytes (the part before any
// "-- decompressed --" space) must cover every byte once, in order, and
// show the wire's bytes, but for withheld secrets ("<redacted>" lines,
// after which offsets count from the secret's end, "+0004"), and for
// values cut at --max-value.

import (
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// hexSeg is a run of a frame's bytes that a dump lists between withheld
// secrets; skip marks bytes elided (cut at --max-value), unknown.
type hexSeg struct {
	data []byte
	skip []bool
}

// hexSection is one "request"/"response" dump of `kwire read -x`.
type hexSection struct {
	exchange string    // client broker corr
	what     string    // request or response
	segs     []*hexSeg // the first from offset 0, each next after a withheld span
	err      string    // the first inconsistency in the dump itself
}

func (s *hexSection) cur() *hexSeg { return s.segs[len(s.segs)-1] }

// elision matches the line -x writes for the rest of a value past
// --max-value.
var elision = regexp.MustCompile(`^ +… (\d+) more bytes of \S+ \(offset (\+?)0x([0-9a-f]+) – (\+?)0x([0-9a-f]+)\)$`)

// offsetAt reads a dump offset ("0007a", "+0004") and checks it against
// where the section's current segment stands.
func (s *hexSection) offsetAt(tok string) (int64, bool) {
	rel := strings.HasPrefix(tok, "+")
	v, err := strconv.ParseInt(strings.TrimPrefix(tok, "+"), 16, 64)
	if err != nil {
		return 0, false
	}
	if s.err == "" {
		switch {
		case rel != (len(s.segs) > 1):
			s.err = "offset " + tok + ": relative offsets must follow a withheld span, and only they"
		case v != int64(len(s.cur().data)):
			s.err = "line at offset " + tok + " after 0x" + strconv.FormatInt(int64(len(s.cur().data)), 16) + " bytes"
		}
	}
	return v, true
}

// parseHexDump reads -x output. Dump lines are "    OFFSET  HEX…  NOTE"
// with 16 bytes at most in a 49-column hex area.
func parseHexDump(out string) []*hexSection {
	var secs []*hexSection
	var exchange string
	var cur *hexSection
	inFrame := false
	for _, line := range strings.Split(out, "\n") {
		switch {
		case line == "" || strings.TrimSpace(line) == "":
			continue
		case !strings.HasPrefix(line, " "):
			exchange, cur, inFrame = exchangeKey(line), nil, false
			continue
		case strings.HasPrefix(line, "  request, packet") || strings.HasPrefix(line, "  response, packet"):
			cur = &hexSection{exchange: exchange, what: strings.Fields(line)[0][:len(strings.Fields(line)[0])-1], segs: []*hexSeg{{}}}
			secs = append(secs, cur)
			inFrame = true
			continue
		case strings.HasPrefix(line, "    -- "):
			inFrame = false // a decoder-made space (decompressed bytes)
			continue
		}
		if cur == nil || !inFrame || !strings.HasPrefix(line, "    ") {
			continue
		}
		if m := elision.FindStringSubmatch(line); m != nil {
			// "… N more bytes of NAME (offset 0xFIRST – 0xLAST)": a value
			// cut at --max-value; the line states the range it stands for.
			n, _ := strconv.Atoi(m[1])
			first, _ := cur.offsetAt(m[2] + m[3])
			last, _ := strconv.ParseInt(m[5], 16, 64)
			if cur.err == "" && (n <= 0 || last-first+1 != int64(n) || m[2] != m[4]) {
				cur.err = "elision of " + m[1] + " bytes over " + m[2] + "0x" + m[3] + "–" + m[4] + "0x" + m[5]
			}
			sg := cur.cur()
			sg.data = append(sg.data, make([]byte, n)...)
			for range n {
				sg.skip = append(sg.skip, true)
			}
			continue
		}
		rest := line[4:]
		sp := strings.IndexByte(rest, ' ')
		if sp <= 0 || !strings.HasPrefix(rest[sp:], "  ") {
			continue // a line of the tree, not of the dump
		}
		if _, ok := cur.offsetAt(rest[:sp]); !ok {
			continue
		}
		area, label := rest[sp+2:], ""
		if len(area) > 49 {
			area, label = area[:49], area[49:]
		}
		if strings.TrimSpace(area) == "<redacted>" {
			// A withheld secret: no bytes and no length; the offsets of the
			// next lines count from its end.
			if strings.Contains(label, "<redacted>") && cur.err == "" {
				cur.err = "a redacted line says so twice"
			}
			cur.segs = append(cur.segs, &hexSeg{})
			continue
		}
		sg := cur.cur()
		for _, tok := range strings.Fields(area) {
			v, err := hex.DecodeString(tok)
			if err != nil || len(v) != 1 || strings.ToLower(tok) != tok {
				break
			}
			sg.data, sg.skip = append(sg.data, v[0]), append(sg.skip, false)
		}
	}
	return secs
}

// matchAt reports whether seg's bytes are those of want at p (elided ones
// aside).
func (sg *hexSeg) matchAt(want []byte, p int) bool {
	if p < 0 || p+len(sg.data) > len(want) {
		return false
	}
	for i, b := range sg.data {
		if !sg.skip[i] && want[p+i] != b {
			return false
		}
	}
	return true
}

// check compares the section with want, the frame's bytes: the first
// segment is the frame's first bytes; each next one follows a withheld
// span (the first place where its bytes match), the last ending the
// frame.
func (s *hexSection) check(want []byte) string {
	if s.err != "" {
		return "the dump is not contiguous: " + s.err
	}
	first := s.segs[0]
	if len(s.segs) == 1 {
		if len(first.data) != len(want) {
			return "the dump shows " + strconv.Itoa(len(first.data)) + " bytes, the wire has " + strconv.Itoa(len(want))
		}
	}
	if !first.matchAt(want, 0) {
		return "the dump's first " + strconv.Itoa(len(first.data)) + " bytes are not the wire's"
	}
	pos := len(first.data)
	for i, sg := range s.segs[1:] {
		last := i == len(s.segs)-2
		p := -1
		if last {
			if q := len(want) - len(sg.data); q >= pos && sg.matchAt(want, q) {
				p = q
			}
		} else {
			for q := pos; q+len(sg.data) <= len(want); q++ {
				if sg.matchAt(want, q) {
					p = q
					break
				}
			}
		}
		if p < 0 {
			return "the bytes after withheld span " + strconv.Itoa(i+1) + " (" + hex.EncodeToString(sg.data) + ") are not the wire's after 0x" + strconv.FormatInt(int64(pos), 16)
		}
		pos = p + len(sg.data)
	}
	if pos != len(want) {
		return "the dump ends at 0x" + strconv.FormatInt(int64(pos), 16) + " of " + strconv.Itoa(len(want)) + " bytes"
	}
	return ""
}

// exchangeKey returns "client broker corr" from an exchange line
// ("12:51:39.942 CLIENT → BROKER API vN corr=N …"), "" for other lines.
func exchangeKey(line string) string {
	f := strings.Fields(line)
	if len(f) < 6 || f[2] != "→" {
		return ""
	}
	for _, x := range f[4:] {
		if strings.HasPrefix(x, "corr=") {
			return f[1] + " " + f[3] + " " + strings.TrimPrefix(x, "corr=")
		}
	}
	return ""
}

func TestHexDumpBytes(t *testing.T) {
	for _, c := range captures(t) {
		base := strings.TrimSuffix(c, ".pcap")
		if _, skip := skipGolden[base+".x"]; skip || encrypted(c) {
			continue // encrypted: the independent reading sees TLS records (TestTLSAgainstWireshark)
		}
		t.Run(base, func(t *testing.T) {
			ic := decodeIndependently(t, info(t, c).conns)
			frames := map[string][]byte{}
			for _, ex := range ic.exchanges {
				k := ex.client.String() + " " + ex.server.String() + " " + strconv.Itoa(int(ex.corr))
				frames[k+" request"] = ex.reqFrame
				if ex.answered {
					frames[k+" response"] = ex.respFrame
				}
			}
			secs := parseHexDump(string(kwire(t, readArgs(t, c, modes[2])...).stdout))
			checked := 0
			for _, s := range secs {
				if s.exchange == "" {
					continue // a raw SASL token
				}
				label := s.exchange + " " + s.what
				want, ok := frames[label]
				switch {
				case !ok:
					t.Errorf("%s: the independent reading has no such frame", label)
				default:
					if msg := s.check(want); msg != "" {
						t.Errorf("%s: %s", label, msg)
					}
				}
				checked++
			}
			if checked != len(frames) {
				t.Errorf("%d frames dumped, %d frames on the wire", checked, len(frames))
			}
		})
	}
}
