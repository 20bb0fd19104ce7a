package pcaps

// TestHexDumpBytes reads the frame bytes back out of `kwire read -x` and
// compares them with the frames the independent reading cut from the
// capture: the dump of each frame's own bytes (the part before any
// "-- decompressed --" space) must cover every byte once, in order, and
// show the wire's bytes, but for withheld secrets ("**").

import (
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// hexSection is one "request"/"response" dump of `kwire read -x`.
type hexSection struct {
	exchange string // client broker corr
	what     string // request or response
	data     []byte
	withheld []bool // bytes shown as "**" (a redacted secret)
	err      string // the first inconsistency in the dump itself
	gap      int    // offset of a redacted line not yet closed by the next line, -1 none
}

// elision matches the line -x writes for the rest of a value past
// --max-value.
var elision = regexp.MustCompile(`^ +… (\d+) more bytes of \S+ \(offset 0x([0-9a-f]+) – 0x([0-9a-f]+)\)$`)

// closeGap ends an open redacted span at off: its bytes count as withheld.
func closeGap(s *hexSection, off int) {
	if s == nil || s.gap < 0 {
		return
	}
	if off < s.gap && s.err == "" {
		s.err = "line at offset " + strconv.Itoa(off) + " before the redacted span at " + strconv.Itoa(s.gap)
	}
	for len(s.data) < off {
		s.data, s.withheld = append(s.data, 0), append(s.withheld, true)
	}
	s.gap = -1
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
			cur = &hexSection{gap: -1, exchange: exchange, what: strings.Fields(line)[0][:len(strings.Fields(line)[0])-1]}
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
			first, _ := strconv.ParseInt(m[2], 16, 64)
			last, _ := strconv.ParseInt(m[3], 16, 64)
			closeGap(cur, int(first))
			switch {
			case cur.err != "":
			case first != int64(len(cur.data)):
				cur.err = "elision at 0x" + m[2] + " after 0x" + strconv.FormatInt(int64(len(cur.data)), 16) + " bytes"
			case n <= 0 || last-first+1 != int64(n):
				cur.err = "elision of " + m[1] + " bytes over 0x" + m[2] + "–0x" + m[3]
			}
			cur.data = append(cur.data, make([]byte, n)...)
			cur.withheld = append(cur.withheld, make([]bool, n)...)
			for i := len(cur.withheld) - n; i < len(cur.withheld); i++ {
				cur.withheld[i] = true
			}
			continue
		}
		rest := line[4:]
		sp := strings.IndexByte(rest, ' ')
		if sp <= 0 {
			continue
		}
		off, err := strconv.ParseInt(rest[:sp], 16, 64)
		if err != nil || !strings.HasPrefix(rest[sp:], "  ") {
			continue // a line of the tree, not of the dump
		}
		closeGap(cur, int(off))
		area, label := rest[sp+2:], ""
		if len(area) > 49 {
			area, label = area[:49], area[49:]
		}
		if strings.TrimSpace(area) == "" && strings.HasSuffix(label, "<redacted>") {
			// A withheld secret: no bytes and no length; the next line
			// resumes after it.
			if off != int64(len(cur.data)) && cur.err == "" {
				cur.err = "redacted line at offset 0x" + rest[:sp] + " after 0x" + strconv.FormatInt(int64(len(cur.data)), 16) + " bytes"
			}
			cur.gap = int(off)
			continue
		}
		var b []byte
		var w []bool
		for _, tok := range strings.Fields(area) {
			if tok == "**" {
				b, w = append(b, 0), append(w, true)
				continue
			}
			v, err := hex.DecodeString(tok)
			if err != nil || len(v) != 1 || strings.ToLower(tok) != tok {
				break
			}
			b, w = append(b, v[0]), append(w, false)
		}
		if off != int64(len(cur.data)) && cur.err == "" {
			cur.err = "line at offset 0x" + rest[:sp] + " after 0x" + strconv.FormatInt(int64(len(cur.data)), 16) + " bytes"
		}
		cur.data = append(cur.data, b...)
		cur.withheld = append(cur.withheld, w...)
	}
	return secs
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
		if _, skip := skipGolden[base+".x"]; skip {
			continue
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
				closeGap(s, len(want)) // a redacted span ending the frame
				switch {
				case !ok:
					t.Errorf("%s: the independent reading has no such frame", label)
				case s.err != "":
					t.Errorf("%s: the dump is not contiguous: %s", label, s.err)
				case len(s.data) != len(want):
					t.Errorf("%s: the dump shows %d bytes, the wire has %d", label, len(s.data), len(want))
				default:
					for i := range want {
						if s.data[i] != want[i] && !s.withheld[i] {
							t.Errorf("%s: the dump shows %02x at 0x%x, the wire has %02x", label, s.data[i], i, want[i])
							break
						}
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
