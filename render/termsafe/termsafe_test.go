package termsafe

import (
	"bytes"
	"strings"
	"testing"
)

func TestSafeQuoteEscape(t *testing.T) {
	for _, c := range []struct {
		in, quote, escape string
	}{
		{"capgen-codecs", "capgen-codecs", "capgen-codecs"},
		{"", "", ""},
		{"with space and UTF-8: café → ×", "with space and UTF-8: café → ×", "with space and UTF-8: café → ×"},
		{"capgen\x1b]0;pw\x07", `"capgen\x1b]0;pw\a"`, `capgen\x1b]0;pw\a`},
		{"line\nfake 12:00:00.000 line", `"line\nfake 12:00:00.000 line"`, `line\nfake 12:00:00.000 line`},
		{"cr\roverwrite", `"cr\roverwrite"`, `cr\roverwrite`},
		{"tab\there", `"tab\there"`, `tab\there`},
		{"del\x7f", `"del\x7f"`, `del\x7f`},
		{"c1 \u009b31m", `"c1 \u009b31m"`, `c1 \u009b31m`},
		{"bidi \u202eevil", `"bidi \u202eevil"`, `bidi \u202eevil`},
		{"bad \xff\xc3(", `"bad \xff\xc3("`, `bad \xff\xc3(`},
		{"nul\x00", `"nul\x00"`, `nul\x00`},
	} {
		if got := Safe(c.in); got != (c.in == c.quote) {
			t.Errorf("Safe(%q) = %v", c.in, got)
		}
		if got := Quote(c.in); got != c.quote {
			t.Errorf("Quote(%q) = %s, want %s", c.in, got, c.quote)
		}
		if got := string(AppendQuote([]byte("x="), c.in)); got != "x="+c.quote {
			t.Errorf("AppendQuote(%q) = %s", c.in, got)
		}
		if got := Escape(c.in); got != c.escape {
			t.Errorf("Escape(%q) = %s, want %s", c.in, got, c.escape)
		}
	}
	// The 8-byte fast path and the byte loop agree at every position.
	base := strings.Repeat("abcdefgh", 5)
	for i := range base {
		s := base[:i] + "\x1b" + base[i:]
		if Safe(s) {
			t.Fatalf("Safe with ESC at %d", i)
		}
		if !Safe(base[:i]) {
			t.Fatalf("Safe(%q) false", base[:i])
		}
	}
}

// write feeds in to a Writer in chunks of size n (0: one write) and
// returns what reached the output after Flush.
func write(t *testing.T, in string, n int, json, colors bool) string {
	t.Helper()
	var out bytes.Buffer
	w := &Writer{W: &out, JSON: json, Colors: colors}
	p := []byte(in)
	if n == 0 {
		n = len(p) + 1
	}
	for len(p) > 0 {
		k := min(n, len(p))
		if got, err := w.Write(p[:k]); err != nil || got != k {
			t.Fatalf("Write: %d, %v", got, err)
		}
		p = p[k:]
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func TestWriter(t *testing.T) {
	red, reset := "\x1b[31;1m", "\x1b[0m"
	for _, c := range []struct {
		name         string
		in           string
		json, colors bool
		want         string
	}{
		{"plain", "12:51:39.753 a → b Produce v9\n\tindent\n", false, false, "12:51:39.753 a → b Produce v9\n\tindent\n"},
		{"title", "topic capgen\x1b]0;pw\x07 next\n", false, false, `topic capgen\x1b]0;pw\x07 next` + "\n"},
		{"cr", "a\rb\n", false, false, `a\x0db` + "\n"},
		{"colors off", red + "x" + reset, false, false, `\x1b[31;1mx\x1b[0m`},
		{"colors on", red + "x" + reset + "\x1b[36mo\x1b[22;39m", false, true, red + "x" + reset + "\x1b[36mo\x1b[22;39m"},
		{"conceal", "\x1b[8mhidden" + reset, false, true, `\x1b[8mhidden` + reset},
		{"background", "\x1b[41mx", false, true, `\x1b[41mx`},
		{"cursor", "\x1b[2J\x1b[1;1H", false, true, `\x1b[2J\x1b[1;1H`},
		{"osc", "\x1b]52;c;ZXZpbA==\x07", false, true, `\x1b]52;c;ZXZpbA==\x07`},
		{"unterminated sgr", "\x1b[31", false, true, `\x1b[31`},
		{"c1", "a\u009b2Jb\u0085", false, false, `a\u009b2Jb\u0085`},
		{"invalid", "a\xffb\xc3", false, false, `a\xffb\xc3`},
		{"del escaped", "a\x7f", false, false, `a\x7f`},
		{"json bidi escaped", "{\"v\":\"E8\u202egnp.exe\u2066\"}", true, false, `{"v":"E8\u202egnp.exe\u2066"}`},
		{"text bidi left to the renderers", "E8\u202egnp", false, false, "E8\u202egnp"},
		{"json", `{"v":"a` + "\u009b" + `b","w":"é→"}` + "\n", true, false, `{"v":"a\u009bb","w":"é→"}` + "\n"},
		{"json controls", "{\"v\":\"\x1b\x7f\xff\"}", true, false, `{"v":"\u001b\u007f\ufffd"}`},
	} {
		for _, n := range []int{0, 1, 2, 3, 5, 7} {
			if got := write(t, c.in, n, c.json, c.colors); got != c.want {
				t.Errorf("%s (writes of %d): %q, want %q", c.name, n, got, c.want)
			}
		}
	}
}

// TestWriterPassesThrough: output that needs no escape reaches W as the
// same slice, unchanged and uncopied.
func TestWriterPassesThrough(t *testing.T) {
	var got [][]byte
	w := &Writer{W: writerFunc(func(p []byte) { got = append(got, p) }), Colors: true}
	in := []byte("12:51:39.753 127.0.0.1:44580 → 127.0.0.1:19092 \x1b[35;1mProduce\x1b[0m v13\n")
	w.Write(in)
	if len(got) != 1 || &got[0][0] != &in[0] || len(got[0]) != len(in) {
		t.Fatalf("safe output was copied or changed: %q", got)
	}
	allocs := testing.AllocsPerRun(100, func() { w.Write(in) })
	if allocs != 0 {
		t.Fatalf("%v allocations a write of safe output", allocs)
	}
}

type writerFunc func([]byte)

func (f writerFunc) Write(p []byte) (int, error) { f(p); return len(p), nil }

func FuzzWriter(f *testing.F) {
	f.Add([]byte("a\x1b[31;1mb\x1b[0m\u009b\xff→\n"), uint8(3))
	f.Fuzz(func(t *testing.T, in []byte, n uint8) {
		for _, colors := range []bool{false, true} {
			whole := write(t, string(in), 0, false, colors)
			if got := write(t, string(in), int(n%16)+1, false, colors); got != whole {
				t.Fatalf("split writes of %d give %q, one write %q", n%16+1, got, whole)
			}
			// Nothing a terminal acts on is left but the colours allowed.
			rest := whole
			for {
				i := strings.IndexByte(rest, 0x1b)
				if i < 0 {
					break
				}
				if !colors || sgrLen([]byte(rest[i:])) <= 0 {
					t.Fatalf("ESC left in %q", whole)
				}
				rest = rest[i+1:]
			}
			for _, r := range whole {
				if r < 0x20 && r != '\n' && r != '\t' && r != 0x1b || r == 0x7f || r >= 0x80 && r < 0xa0 {
					t.Fatalf("control %U left in %q", r, whole)
				}
			}
		}
	})
}

// TestDirty holds the 8-byte test to the byte test for every byte value
// at every position, beside every other kind of byte.
func TestDirty(t *testing.T) {
	bad := func(c byte) bool { return c < 0x20 && c != '\n' || c >= 0x7f }
	for _, fill := range []byte{'a', '\n', '\t', 0x1f, 0x7f, 0x80, 0xff, ' '} {
		for c := 0; c < 256; c++ {
			for pos := 0; pos < 8; pos++ {
				var b [8]byte
				for i := range b {
					b[i] = fill
				}
				b[pos] = byte(c)
				want := false
				for _, x := range b {
					want = want || bad(x)
				}
				x := uint64(0)
				for i := 7; i >= 0; i-- {
					x = x<<8 | uint64(b[i])
				}
				if got := dirty(x) != 0; got != want {
					t.Fatalf("dirty(% x) = %v, want %v", b, got, want)
				}
				// and exactly which bytes
				d := dirty(x)
				for i, v := range b {
					if (d>>(8*i+7))&1 == 1 != bad(v) {
						t.Fatalf("dirty(% x): byte %d flagged %v", b, i, !bad(v))
					}
				}
			}
		}
	}
}

func BenchmarkWriterText(b *testing.B) {
	line := []byte("          ApiKey: 13 (LeaveGroup)\n          MinVersion: 0\n\tMaxVersion: 5\n")
	p := bytes.Repeat(line, 64<<10/len(line))
	w := &Writer{W: writerFunc(func([]byte) {}), Colors: true}
	b.SetBytes(int64(len(p)))
	for b.Loop() {
		w.Write(p)
	}
}

// TestClean holds clean, in both modes, to a byte-at-a-time scan on
// every string of up to 20 bytes, and of 64 to 80 (JSON's four-word
// test), over an alphabet of its cases (plain,
// newline, tab, DEL, a control, a byte above 0x7f) at a few positions:
// a newline or tab anywhere, then a byte to stop at anywhere after it.
func TestClean(t *testing.T) {
	stop := func(p []byte) int {
		for i, c := range p {
			if c < 0x20 && c != '\n' && c != '\t' || c >= 0x7f {
				return i
			}
		}
		return len(p)
	}
	for _, json := range []bool{false, true} {
		w := &Writer{JSON: json}
		for n := 0; n <= 80; n++ {
			if n == 21 {
				n = 64
			}
			for i := 0; i <= n; i++ {
				for j := i; j <= n; j++ {
					for _, soft := range []byte{'\n', '\t', ' '} {
						for _, hard := range []byte{0x1b, 0x00, 0x7f, 0x80, 0xc2, 'z'} {
							p := bytes.Repeat([]byte{'a'}, n)
							if i < n {
								p[i] = soft
							}
							if j < n && j != i {
								p[j] = hard
							}
							if got, want := w.clean(p), stop(p); got != want {
								t.Fatalf("clean(%q) json=%v = %d, want %d", p, json, got, want)
							}
						}
					}
				}
			}
		}
	}
}

func BenchmarkWriterJSON(b *testing.B) {
	line := []byte(`{"ts":"2026-12-07T04:00:00.000Z","api":"Heartbeat","request":{"groupId":"g","generationId":7},"response":{"errorCode":0}}` + "\n")
	p := bytes.Repeat(line, 64<<10/len(line))
	w := &Writer{W: writerFunc(func([]byte) {}), JSON: true}
	b.SetBytes(int64(len(p)))
	for b.Loop() {
		w.Write(p)
	}
}
