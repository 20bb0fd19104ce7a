package render

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// seed is an ApiVersions v0 request frame: length 19, key 18, version 0,
// correlation ID 0x01020304, client ID "wire-read".
const seedHex = "0000001300120000010203040009776972652d72656164"

func TestParseHex(t *testing.T) {
	seed, _ := hex.DecodeString(seedHex)
	zeros := make([]byte, 64)
	tests := []struct {
		name string
		in   string
		want []byte
	}{
		{"plain", seedHex + "\n", seed},
		{"upper case and spaces", strings.ToUpper("00 00 00 13 00 12 00 00 01 02 03 04 00 09 77 69 72 65 2d 72 65 61 64"), seed},
		{"0x whole", "0x" + seedHex, seed},
		{"0x per byte with commas (xxd -i)", "0x00, 0x00, 0x00, 0x13, 0x00, 0x12, 0x00, 0x00, 0x01, 0x02, 0x03, 0x04,\n 0x00, 0x09, 0x77, 0x69, 0x72, 0x65, 0x2d, 0x72, 0x65, 0x61, 0x64", seed},
		{"backslash x", `\x00\x00\x00\x13\x00\x12\x00\x00\x01\x02\x03\x04\x00\x09\x77\x69\x72\x65\x2d\x72\x65\x61\x64`, seed},
		{"hexdump -C", `00000000  00 00 00 13 00 12 00 00  01 02 03 04 00 09 77 69  |..............wi|
00000010  72 65 2d 72 65 61 64                              |re-read|
00000017
`, seed},
		{"xxd", `00000000: 0000 0013 0012 0000 0102 0304 0009 7769  ..............wi
00000010: 7265 2d72 6561 64                        re-read
`, seed},
		{"wireshark copy as hex dump", `0000   00 00 00 13 00 12 00 00 01 02 03 04 00 09 77 69   ..............wi
0010   72 65 2d 72 65 61 64                              re-read
`, seed},
		{"hexdump -C with repeated lines", `00000000  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00  |................|
*
00000040
`, zeros},
		{"xxd whose ASCII column looks like hex", "00000000: 6162 6364  abcd\n", []byte("abcd")},
		{"xxd whose ASCII column holds a '|' (not hexdump -C's)", "00000000: 6162 2d7c 6364  ab-|cd\n", []byte("ab-|cd")},
		{"kwire -x with a decompressed section after the frame", `0000  00 00 00 13 00 12 00 00  01 02 03 04 00 09 77 69  Foo
0010  72 65 2d 72 65 61 64                              Bar

-- snappy-decompressed records of batch at 0x44 (1632 bytes) --
0000  8c 05                                             Records[0].Length 326
`, seed},
		{"kwire -x with an error line", "0000  00 00 00 13 00 12 00 00  01 02 03 04 00 09 77 69  Foo\nerror: unknown API version 99\n0010  72 65 2d 72 65 61 64  Bar\n", seed},
		{"kwire -x with an unknown version's line", "0000  00 00 00 13 00 12 00 00  01 02 03 04 00 09 77 69  Foo\nunknown version: ApiVersions v99 is beyond what kwire's schemas define (v0-5); body shown raw\n0010  72 65 2d 72 65 61 64  Bar\n", seed},
		{"kwire -x with an unknown API's line", "0000  00 00 00 13 00 12 00 00  01 02 03 04 00 09 77 69  Foo\nunknown API: key 1234 is not one kwire's schemas define; body shown raw\n0010  72 65 2d 72 65 61 64  Bar\n", seed},
		{"lone CR line ends", "0000  00 00 00 13 00 12 00 00  01 02 03 04 00 09 77 69\r0010  72 65 2d 72 65 61 64\r", seed},
		{"xxd -g1, a short row whose ASCII looks like hex", "00000000: 00 00 00 14 00 12 00 00 00 00 00 01 00 0a 78 79  ..............xy\n00000010: 61 62 20 20 63 64 65 66                          ab  cdef\n",
			[]byte("\x00\x00\x00\x14\x00\x12\x00\x00\x00\x00\x00\x01\x00\x0axyab  cdef")},
		{"kwire decode -x", `0000  00 00 00 13                                       Length 19
0004  00 12                                             RequestHeader.RequestApiKey 18 (ApiVersions)
0006  00 00                                             RequestHeader.RequestApiVersion 0
0008  01 02 03 04                                       RequestHeader.CorrelationId 16909060
000c  00 09                                             RequestHeader.ClientId (length 9)
000e  77 69 72 65 2d 72 65 61  64                       RequestHeader.ClientId "wire-read"
0017                                                    ApiVersionsRequest v0 (empty)
`, seed},
		{"kwire read -x, 16-byte rows and the frame heading", `12:51:39.752 127.0.0.1:44306 → 127.0.0.1:19092 ApiVersions v0 corr=16909060 client=wire-read 0.209ms 23B/14B
  request, packet 4:
    0000  00 00 00 13 00 12 00 00  01 02 03 04 00 09 77 69  RequestHeader.ClientId "wi"
    0010  72 65 2d 72 65 61 64                              ApiVersionsRequest.Fake 00 ab "re-read"
`, seed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseHex(tt.in)
			if err != nil {
				t.Fatalf("parseHex: %v", err)
			}
			if !bytes.Equal(got, tt.want) {
				t.Errorf("parseHex = %x, want %x", got, tt.want)
			}
		})
	}
}

func TestParseHexErrors(t *testing.T) {
	tests := []struct {
		name, in, wantMsg string
	}{
		{"empty", " \n\t", "no hex digits"},
		{"odd", "0001020", "odd number of hex digits (7)"},
		{"bad digit", "00 0g", `line 1, column 5: 'g' is not a hex digit`},
		{"bad digit second line", "0000\n  zz", `line 2, column 3: 'z' is not a hex digit`},
		{"dump offset mismatch", "00000000  00 01 02 03  |....|\n00000010  04  |.|\n", "offset 0x10 does not follow the 4 bytes before it"},
		{"dump repeat too long", "00000000  00 00  |..|\n*\n7fffffff\n", "would repeat 2147483645 bytes"},
		{"dump odd line", "00000000: 000 0102  ....\n", "line 1, column 11: odd number of hex digits (7) on the line"},
		{"a typo in a row's first byte", "0000  00 00 00 13 00 12 00 00  01 02 03 04 00 09 77 69\n0010  0g 65 2d\n", "line 2, column 8: 'g' is not a hex digit"},
		{"kwire -x with a secret withheld", "0000  00 00 00 0c  Length 12\n0004  00 00 00 01  X 1\n0008  AuthBytes.password <redacted>\n0010  00  Tags\n", "line 3, column 1: the dump withholds a secret's bytes"},
		{"kwire -x with a secret withheld, relative offsets after it", "00000  00 00 00 0c  Length 12\n00004  00 00 00 01  X 1\n00008  <redacted>  AuthBytes.password\n+0000  00  Tags\n", "line 3, column 1: the dump withholds a secret's bytes"},
		{"many repeats adding up", "00000000  00 00  |..|\n" + manyRepeats(40), "more than the 104857600 a frame can hold"},
		// Each frame's offsets start over: their repeats add up all the same.
		{"repeats adding up over frames", strings.Repeat("00000000  00 00  |..|\n*\n03000000  00 00  |..|\n", 3), "would repeat more than 104857600 bytes in all"},
		{"offset near 2^63", "7ffffffffffffff0  00 01 02 03 04 05 06 07  08 09 0a 0b 0c 0d 0e 0f  |................|\n*\n7fffffffffffffff\n", "is beyond any dump of a frame"},
		{"kwire -x with a value cut", "0000  00 00 00 13 00 12 00 00  01 02 03 04 00 09 77 69  Foo\n            … 1499744 more bytes of Value (offset 0x18d – 0x16e3ec)\n", "line 2, column 13: the dump leaves out 1499744 bytes here"},
		{"a repeat going backwards", "00000010  00 01 02 03 04 05 06 07  08 09 0a 0b 0c 0d 0e 0f  |................|\n*\n00000008\n", "offset 0x8 does not follow"},
		{"two -x frames", "  request, packet 4:\n    0000  00 00 00 02  Length 2\n    0004  00 12  RequestHeader.RequestApiKey 18\n  response, packet 6:\n    0000  00 00 00 04  Length 4\n",
			"line 5, column 1: a second frame begins here (2 in all, the first on line 2)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseHex(tt.in)
			if err == nil {
				t.Fatalf("ParseHex(%q) = %x, want an error", tt.in, got)
			}
			var he *hexError
			if !errors.As(err, &he) {
				t.Fatalf("error %T is not a *hexError", err)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error %q does not contain %q", err, tt.wantMsg)
			}
		})
	}
}

// FuzzParseHex: any text either fails with a *hexError or gives bytes that
// round-trip through plain hex.
func FuzzParseHex(f *testing.F) {
	f.Add(seedHex)
	f.Add("00000000  00 00 00 13 00 12 00 00  01 02 03 04 00 09 77 69  |..............wi|\n*\n00000020\n")
	f.Add("00000000: 0000 0013 0012 0000  ......\n")
	f.Add(`0x00, 0x13 \x00\x12`)
	f.Add("  request, packet 4:\n    0000  00 00 00 13 00 12 00 00  01 02 03 04 00 09 77 69  Foo \"wi\"\n    0010  72 65 2d  Bar\n    0013  Baz (empty)\n\n    -- lz4-decompressed records --\n    0000  00  X\n")
	f.Add("0000  00 00 00 0c  Length 12\n0008  AuthBytes.password <redacted>\n        … 12 more bytes of Value (offset 0x1 – 0xd)\n")
	f.Add("00000  00 00 00 0c  Length 12\n00008  <redacted>  AuthBytes.password\n+0000  00  Tags\n        … 12 more bytes of Value (offset +0x1 – +0xd)\n")
	f.Add("12:00 sent 000000110012000000000007000772646b61666b61 (21 bytes) 4bf92f3577b34da6\nnext line\n|00000000| 00 00 00 02 00 12 |......|\n\t0x0000:  4500 0014  E...\n")
	f.Fuzz(func(t *testing.T, s string) {
		// Frames: each holds bytes, on a line of the text, and a note
		// shows no run of hex.
		frames, notes, err := ParseHexFrames(s, HexOptions{Framed: true})
		var he *hexError
		if err != nil && !errors.As(err, &he) {
			t.Fatalf("ParseHexFrames: error %T is not a *hexError", err)
		}
		for _, f := range frames {
			if len(f.Data) == 0 || f.Line < 1 || f.Line > strings.Count(s, "\n")+strings.Count(s, "\r")+1 {
				t.Fatalf("frame %x on line %d", f.Data, f.Line)
			}
		}
		for _, n := range notes {
			// (%q writes bytes that are not UTF-8 as \x escapes: they
			// are not hex in the text.)
			if plainHexRun.MatchString(quotedByte.ReplaceAllString(n, "~")) {
				t.Fatalf("note %q shows a run of hex", n)
			}
		}
		b, err := ParseHex(s)
		if err != nil {
			var he *hexError
			if !errors.As(err, &he) {
				t.Fatalf("error %T is not a *hexError", err)
			}
			return
		}
		if len(b) == 0 {
			t.Fatal("success with no bytes")
		}
		again, err := ParseHex(hex.EncodeToString(b))
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("round trip: %x, %v; want %x", again, err, b)
		}
	})
}

// plainHexRun is 8 bytes of hex digits or more, with a space, ':' or ','
// between bytes or not.
var plainHexRun = regexp.MustCompile(`[0-9a-fA-F]{2}(?:[ :,]?[0-9a-fA-F]{2}){7,}`)

// quotedByte is a byte %q escapes.
var quotedByte = regexp.MustCompile(`\\x[0-9a-f]{2}`)

// manyRepeats is n pairs of a "*" line and a dump line 80 MiB further:
// each repeat is within a frame's size, all of them are not.
func manyRepeats(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "*\n%08x  00 00  |..|\n", i*80<<20)
	}
	return b.String()
}

// A log line's text before the hex is skipped and said; hex that does not
// end its line, or too little of it, is still an error.
func TestParseHexLogPrefix(t *testing.T) {
	b, notes, err := ParseHexNoting("[2026-05-01 12:00:00,123] DEBUG sent payload=0000001300120000\nfoo: 01020304 0506\n")
	if err != nil || len(b) != 14 || b[3] != 0x13 || b[13] != 6 {
		t.Fatalf("bytes %x, err %v", b, err)
	}
	want := []string{`line 1: skipped "[2026-05-01 12:00:00,123] DEBUG sent payload=" before the hex`, `line 2: skipped "foo:" before the hex`}
	if !slices.Equal(notes, want) {
		t.Errorf("notes %q, want %q", notes, want)
	}
	// A port (or an offset) and a colon before the hex are text, not
	// bytes: "9092:" read as hex made the frame's length 0x90920000.
	// Hex written with colons is not taken for one.
	for in, want := range map[string]string{
		"recv from 10.0.0.5:9092: 0000001300120000":    "0000001300120000",
		"x: 00:00:00:13:00:12":                         "000000130012",
		"at 0000: 00 00 00 13 00 12":                   "000000130012",
		"payload=00000013 00120000 01020304 0009 7772": "00000013001200000102030400097772",
	} {
		if b, _, err := ParseHexNoting(in); err != nil || hex.EncodeToString(b) != want {
			t.Errorf("%q: %x, %v; want %s", in, b, err, want)
		}
	}
	for _, bad := range []string{"payload=00 0g", "x=0102", "payload=00000013 (cut)"} {
		if _, _, err := ParseHexNoting(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestParseHexLogDump: a dump whose every line a logger prefixed with
// its own text (with a heading line that holds no bytes) is read: the
// text before each dump line is skipped, and said. Offsets that do not
// follow (a line's prefix read as part of its dump) and a line with no
// dump between two that have one are still errors.
func TestParseHexLogDump(t *testing.T) {
	const pre = "%7|1700000000.123|PROTOHEXDUMP|rdkafka#producer-1| [thrd:b1:9092/1]: "
	in := "%7|1700000000.123|SEND|rdkafka#producer-1| [thrd:b1:9092/1]: Sent ApiVersionsRequest (v0, 23 bytes)\n" +
		pre + "00000000: 00 00 00 13 00 12 00 00 01 02 03 04 00 09 77 69  ..............wi\n" +
		pre + "00000010: 72 65 2d 72 65 61 64                             re-read\n"
	b, notes, err := ParseHexNoting(in)
	if err != nil || !bytes.Equal(b, []byte("\x00\x00\x00\x13\x00\x12\x00\x00\x01\x02\x03\x04\x00\x09wire-read")) {
		t.Fatalf("bytes %q, err %v", b, err)
	}
	want := []string{
		`line 1: skipped "%7|1700000000.123|SEND|rdkafka#producer-1| [thrd:b1:9092/1]:…": no dump bytes on it`,
		`lines 2-3: skipped the text before each dump line ("%7|1700000000.123|PROTOHEXDUMP|rdkafka#producer-1| [thrd:b1:9092/1]: " on line 2)`,
	}
	if !slices.Equal(notes, want) {
		t.Errorf("notes %q, want %q", notes, want)
	}
	// Lines prefixed by a logger whose text ends in a number and a colon
	// (a port): the offset-0 place is taken on the first line, and the
	// same place on the next.
	port := "10.0.0.5:9092:  "
	if b, _, err := ParseHexNoting(port + "0000: 00 00 00 02 00 12\n" + port + "0006: 00 00\n"); err != nil || !bytes.Equal(b, []byte{0, 0, 0, 2, 0, 0x12, 0, 0}) {
		t.Errorf("a prefix ending in a port: %x, %v", b, err)
	}
	bad := pre + "00000000: 00 00 00 13  ....\n" + pre + "00000010: 72 65  re\n" // offset 0x10 after 4 bytes
	if b, _, err := ParseHexNoting(bad); err == nil {
		t.Errorf("%q: %x, no error", bad, b)
	}
	// Another thread's log line between two lines of one dump (their
	// offsets follow) is skipped, and said.
	b, notes, err = ParseHexNoting(pre + "00000000: 00 00 00 13  ....\nsome other line\n" + pre + "00000004: 00 12  ..\n")
	if err != nil || hex.EncodeToString(b) != "000000130012" || !slices.Contains(notes, `line 2: skipped "some other line": no dump bytes on it`) {
		t.Errorf("a line between: %x, %q, %v", b, notes, err)
	}
}

// TestParseHexBase64Hint: input that is base64 as a whole (bytes as JSON
// gives them) gets a hint to turn it into hex; hex with a stray character
// or two, and text that is not base64, do not.
func TestParseHexBase64Hint(t *testing.T) {
	const hint = "the input looks like base64"
	for _, c := range []struct {
		in, msg string
		hint    bool
	}{
		// ApiVersions v0 from "wire-read", as base64 (padded, and as one
		// of several lines of a JSON pretty-printer's output).
		{"AAAAEwASAAABAgMEAAl3aXJlLXJlYWQ=", "line 1, column 6: 'w' is not a hex digit", true},
		{"  AAAAEwASAAABAgMEAAl3aXJl\n  LXJlYWQ=\n", "line 1, column 8: 'w' is not a hex digit", true},
		// A hex frame with one typo ('g'): all of its characters are in
		// base64's alphabet, yet it is hex.
		{"0000001300120000010203040009776972652d7265616g", "column 46: 'g' is not a hex digit", false},
		{"00 13 zz", "column 7: 'z' is not a hex digit", false},
		{"not hex, not base64 either!", "is not a hex digit", false},
	} {
		_, err := ParseHex(c.in)
		if err == nil || !strings.Contains(err.Error(), c.msg) || strings.Contains(err.Error(), hint) != c.hint {
			t.Errorf("ParseHex(%q): error %v; want %q, hint %v", c.in, err, c.msg, c.hint)
		}
		var he *hexError
		if !errors.As(err, &he) {
			t.Errorf("ParseHex(%q): error %T is not a *hexError", c.in, err)
		}
	}
}

// TestParseHexLogPrefixLongLine: a long line of short hex words and a
// word that is not is refused in linear-logarithmic time, and a frame
// after a long text is still found: every space was a start read to the
// line's end (a 300 KB line took 45 s).
func TestParseHexLogPrefixLongLine(t *testing.T) {
	start := time.Now()
	// The hex need not end the line: 100000 bytes of ab between "x" and "Z".
	b, notes, err := ParseHexNoting("x " + strings.Repeat("ab ", 100000) + "Z")
	if err != nil || len(b) != 100000 || b[0] != 0xab || b[99999] != 0xab || !slices.Equal(notes, []string{`line 1: skipped "x" before and "Z" after the hex`}) {
		t.Errorf("a line ending in Z: %d bytes, %q, %v", len(b), notes, err)
	}
	if _, _, err := ParseHexNoting(strings.Repeat("a ", 100000) + "g"); err == nil {
		t.Error("a line of odd hex digits and no word of text: no error")
	}
	b, notes, err = ParseHexNoting(strings.Repeat("log ab ", 50000) + "sent: 00000013 00120000")
	if err != nil || hex.EncodeToString(b) != "0000001300120000" || len(notes) != 1 {
		t.Errorf("%x, %q, %v", b, notes, err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v", d)
	}
	// Places that look like a dump line's start (64 in the first 512
	// bytes), each before the rest of a 3 MB line: each was read to the
	// line's end (5 s a megabyte).
	start = time.Now()
	b, _, err = ParseHexNoting(strings.Repeat("y 0000: ", 100) + strings.Repeat("ab ", 1000000))
	if err != nil || len(b) != 1000000 {
		t.Errorf("dump starts before a long run: %d bytes, %v", len(b), err)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("took %v", d)
	}
}

// TestParseHexSkippedHexWithheld: text skipped around the hex read is
// quoted in the note with its runs of hex withheld. A SaslAuthenticate
// frame followed by a trace ID in a log line was skipped as text (the ID
// was the hex at the line's end) and quoted, its PLAIN password
// ("Qzpass") in hex among the 60 bytes shown; now the frame is read (a
// whole frame, and the longest run), and a frame the rule does not pick
// (the second, less long, unframed) is withheld in the note.
func TestParseHexSkippedHexWithheld(t *testing.T) {
	frame := "0000001700240000 000000030000000000090075 00517a70617373"
	for _, framed := range []bool{false, true} {
		frames, notes, err := ParseHexFrames("sent "+frame+" traceId=4bf92f3577b34da6", HexOptions{Framed: framed})
		want := []string{`line 1: skipped "sent" before and "traceId=<hex, 8 bytes>" after the hex`}
		if err != nil || len(frames) != 1 || len(frames[0].Data) != 27 || !slices.Equal(notes, want) {
			t.Errorf("framed %v: %v, notes %q, %v; want 27 bytes, notes %q", framed, frames, notes, err, want)
		}
	}
	// Bytes after the frame, 0x-prefixed and \x-escaped: withheld too.
	for _, after := range []string{
		"payload={0x00, 0x51, 0x7a, 0x70, 0x61, 0x73, 0x73, 0x00}",
		`payload="\x00\x51\x7a\x70\x61\x73\x73\x00"`,
	} {
		frames, notes, err := ParseHexFrames("sent "+seedHex+" "+after, HexOptions{Framed: true})
		want := `line 1: skipped "sent" before and "payload={<hex, 8 bytes>}" after the hex`
		if strings.Contains(after, `\x`) {
			want = `line 1: skipped "sent" before and "payload=\"<hex, 8 bytes>\"" after the hex`
		}
		if err != nil || len(frames) != 1 || hex.EncodeToString(frames[0].Data) != seedHex || !slices.Equal(notes, []string{want}) {
			t.Errorf("%q: %v, notes %q, %v; want %q", after, frames, notes, err, want)
		}
	}
	_, notes, err := ParseHexNoting("sent 00000013001200000102030400097769726572656164 and " + frame)
	want := []string{`line 1: skipped "sent <hex, 22 bytes> and" before the hex`}
	if err != nil || !slices.Equal(notes, want) {
		t.Errorf("notes %q, %v; want %q", notes, err, want)
	}
}

// TestParseHexFramesShapes: the frames found in the shapes real logs give
// hex in, by ParseHexFrames' rule. f1 is ApiVersions v0 from "rdkafka",
// correlation ID 7 (21 bytes); seedHex the same from "wire-read" (23).
func TestParseHexFramesShapes(t *testing.T) {
	const f1 = "000000110012000000000007000772646b61666b61"
	var sp strings.Builder // f1 as "00 00 00 11 ..."
	for i := 0; i < len(f1); i += 2 {
		if i > 0 {
			sp.WriteByte(' ')
		}
		sp.WriteString(f1[i : i+2])
	}
	spaced := sp.String()
	tests := []struct {
		name   string
		in     string
		framed bool
		want   []string // each frame's bytes, in hex
		lines  []int    // each frame's first line
	}{
		{"hex inside a log line, text after it", "2026-05-01 12:00:00,123 DEBUG [Producer clientId=p1] sent " + f1 + " (21 bytes)", true, []string{f1}, []int{1}},
		{"spaced bytes and text after them (a Java client's TRACE)", "TRACE [Consumer clientId=c1] Sending bytes: " + spaced + " to node 1", true, []string{f1}, []int{1}},
		{"unframed: the longest run", "sent " + f1 + " (21 bytes)", false, []string{f1}, []int{1}},
		{"a trace ID and a UUID nearby", "traceparent=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 id=123e4567-e89b-12d3-a456-426614174000 span=00f067aa0ba902b7 sent " + f1 + " ok", true, []string{f1}, []int{1}},
		{"a hex-spelled word before the frame", "should be " + f1, true, []string{f1}, []int{1}},
		{"a trace ID after the frame, a space between", "sent " + f1 + " 4bf92f3577b34da6", true, []string{f1}, []int{1}},
		// Spaced bytes past the frame's length are not cut off: the run
		// is read whole (and decoding says what is left over).
		{"bytes past a frame's length, spaced", "sent " + spaced + " 01 02", true, []string{f1 + "0102"}, []int{1}},
		{"two frames on one line", "req=" + seedHex + " resp=" + f1, true, []string{seedHex, f1}, []int{1, 1}},
		{"two log lines, a frame each", "12:00 DEBUG sent " + seedHex + "\n12:00 DEBUG sent " + f1 + "\n", true, []string{seedHex, f1}, []int{1, 2}},
		{"plain hex, a whole frame a line", seedHex + "\n" + f1 + "\n", true, []string{seedHex, f1}, []int{1, 2}},
		{"plain hex, a frame over two lines", f1[:20] + "\n" + f1[20:] + "\n", true, []string{f1}, []int{1}},
		{"a frame over two log lines", "sent " + f1[:20] + "\nsent " + f1[20:] + "\n", true, []string{f1}, []int{1}},
		{"headings between frames of plain hex", "Sent request:\n" + seedHex + "\nReceived:\n" + f1[:20] + "\n" + f1[20:] + "\n", true, []string{seedHex, f1}, []int{2, 4}},
		{"unframed: text lines split, whole frames do not", "Sent:\n" + seedHex + "\n" + f1 + "\nnext body:\n0102030405\n", false, []string{seedHex + f1, "0102030405"}, []int{2, 5}},
		{"librdkafka hexdumps, log lines between", `%7|1700000000.100|SEND|rdkafka#producer-1| [thrd:localhost:9092/bootstrap]: Sent ApiVersionsRequest (v0, 21 bytes @ 0, CorrId 7)
Sent request hexdump (21 bytes):
00000000: 00 00 00 11 00 12 00 00 00 00 00 07 00 07 72 64  ..............rd
00000010: 6b 61 66 6b 61                                   kafka           
%7|1700000000.200|SEND|rdkafka#producer-1| [thrd:localhost:9092/bootstrap]: Sent ApiVersionsRequest (v0, 23 bytes @ 0, CorrId 16909060)
Sent request hexdump (23 bytes):
00000000: 00 00 00 13 00 12 00 00 01 02 03 04 00 09 77 69  ..............wi
00000010: 72 65 2d 72 65 61 64                             re-read         
`, true, []string{f1, seedHex}, []int{3, 7}},
		{"Netty's prettyHexDump", `2026-05-01 12:00:00.123 DEBUG [id: 0x1a2b3c4d, L:/127.0.0.1:50000 - R:localhost/127.0.0.1:9092] WRITE: 21B
         +-------------------------------------------------+
         |  0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f |
+--------+-------------------------------------------------+----------------+
|00000000| 00 00 00 11 00 12 00 00 00 00 00 07 00 07 72 64 |..............rd|
|00000010| 6b 61 66 6b 61                                  |kafka           |
+--------+-------------------------------------------------+----------------+
`, true, []string{f1}, []int{5}},
		{"tcpdump -X (the packet's bytes)", `12:51:47.193938 IP localhost.35348 > localhost.19094: Flags [P.], seq 1:29, ack 1, win 64, length 28
	0x0000:  4500 0050 a0f8 4000 4006 9bad 7f00 0001  E..P..@.@.......
	0x0010:  7f00 0001 8a14 4a96 6410 5eda 24e2 4a28  ......J.d.^.$.J(
`, true, []string{"45000050a0f8400040069bad7f0000017f0000018a144a9664105eda24e24a28"}, []int{2}},
		{"kwire read -x, a request and its response", `  request, packet 4:
    0000  00 00 00 02  Length 2
    0004  00 12  RequestHeader.RequestApiKey 18
  response, packet 6:
    0000  00 00 00 04  Length 4
`, true, []string{"000000020012", "00000004"}, []int{2, 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			frames, notes, err := ParseHexFrames(tt.in, HexOptions{Framed: tt.framed})
			if err != nil {
				t.Fatalf("error %v", err)
			}
			var got []string
			var lines []int
			for _, f := range frames {
				got = append(got, hex.EncodeToString(f.Data))
				lines = append(lines, f.Line)
			}
			if !slices.Equal(got, tt.want) || !slices.Equal(lines, tt.lines) {
				t.Errorf("frames %q on lines %v, want %q on %v (notes %q)", got, lines, tt.want, tt.lines, notes)
			}
			for _, n := range notes {
				if hexRun.MatchString(n) {
					t.Errorf("a note shows a run of hex: %q", n)
				}
			}
		})
	}
}

// TestParseHexLineRunsMemory: the runs of a long line are read token by
// token, not kept: a 3 MB line of a million one-byte words allocates a
// few times its size (the digits, the bytes), not 24 bytes a word twice
// over (a 60 MB line took 1.5 GB).
func TestParseHexLineRunsMemory(t *testing.T) {
	line := "x " + strings.Repeat("ab ", 1000000) + "Z"
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	frames, _, err := ParseHexFrames(line, HexOptions{Framed: true})
	runtime.ReadMemStats(&after)
	if err != nil || len(frames) != 1 || len(frames[0].Data) != 1000000 {
		t.Fatalf("%d frames, %v", len(frames), err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 5*uint64(len(line)) {
		t.Errorf("allocated %d bytes for a %d-byte line", alloc, len(line))
	}
}

// Text before the hex that holds a credential as a config value can (a
// logger's "password=...", "Authorization: Bearer ...") is not quoted in
// the note: it said skipped "DEBUG user=bob password=kwLogPW sent ".
func TestParseHexSkippedCredentialWithheld(t *testing.T) {
	frame := "0000000b00120000000000070001" + "74"
	for prefix, want := range map[string]string{
		"DEBUG user=bob password=kwLogPW sent ":      "line 1: skipped <36 bytes withheld: they look like they hold a credential> before the hex",
		"DEBUG Authorization: Bearer kwLogTok sent ": "line 1: skipped <41 bytes withheld: they look like they hold a credential> before the hex",
		"DEBUG payload=": `line 1: skipped "DEBUG payload=" before the hex`,
		// A secret after its name and a space: quoted before.
		"ssl.keystore.password kwLogPW2 sent ": "line 1: skipped <35 bytes withheld: they look like they hold a credential> before the hex",
		"DEBUG token kwLogTok2 sent ":          "line 1: skipped <26 bytes withheld: they look like they hold a credential> before the hex",
		"DEBUG [Producer clientId=p1] sent ":   `line 1: skipped "DEBUG [Producer clientId=p1] sent" before the hex`,
	} {
		b, notes, err := ParseHexNoting(prefix + frame)
		if err != nil || len(b) != 15 {
			t.Fatalf("%q: %d bytes, %v", prefix, len(b), err)
		}
		if !slices.Equal(notes, []string{want}) {
			t.Errorf("%q: notes %q, want %q", prefix, notes, want)
		}
	}
}
