package main

import (
	"cmp"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/kwire/kwire/pipeline"
	"github.com/kwire/kwire/protocol"
	"github.com/kwire/kwire/render"
	"github.com/spf13/cobra"
)

type decodeOptions struct {
	File string // -f: read hex from this file ("-" is stdin)

	API      string // --api: key or name, for bodies and response frames
	Version  int    // --version
	Request  bool
	Response bool
	Frame    bool   // --frame: the input starts with the 4-byte length
	Type     string // --type: a header or non-RPC struct name

	HexDump bool // -x
	JSON    bool
	Records bool

	MaxDecompressed byteSize // --max-decompressed
	MaxDecodeMemory byteSize // --max-decode-memory
	MaxInput        byteSize // --max-input-memory: the most hex text read

	out outputOptions

	versionSet bool
	// hint, set by decode when the bytes fail as what the flags say but
	// look like something else, follows the decode error.
	hint string

	// noHints, set past maxFrameErrors frames that did not decode, spares
	// the rest the hints' work (trying every response schema).
	noHints bool

	// pairs, when the input holds several frames and no flags say what
	// they are, pairs responses with the requests before them
	// (decodeFrames); nil otherwise.
	pairs *requestPairs
}

// requestPairs remembers the requests decoded from one input, by
// correlation ID (the last maxPairs), so that a frame after them that
// does not decode as a request but decodes whole as the response to one
// is decoded as that response: a client's log of what it sent and
// received.
type requestPairs struct {
	byCorr map[int32]pairedRequest
	order  []int32 // the correlation IDs kept, oldest first
	frame  int     // the frame being decoded (1-based), for the note
	note   string  // set when that frame was decoded as a response
}

// pairedRequest is a request decoded: its API key and version (from its
// header) and the frame it was.
type pairedRequest struct {
	key, version int16
	frame        int
}

// maxPairs bounds the requests requestPairs keeps (about 40 bytes each).
const maxPairs = 4096

func (p *requestPairs) add(corr int32, r pairedRequest) {
	if _, ok := p.byCorr[corr]; !ok {
		if len(p.order) >= maxPairs {
			delete(p.byCorr, p.order[0])
			p.order = p.order[1:]
		}
		p.order = append(p.order, corr)
	}
	p.byCorr[corr] = r
}

func newDecodeCmd(s *ioStreams, g *globalOptions) *cobra.Command {
	o := &decodeOptions{Records: true}
	cmd := &cobra.Command{
		Use:   "decode [flags] [HEX...]",
		Short: "Decode Kafka frames, bodies or structs given as hex",
		Long: `Decode Kafka frames, message bodies or structs given as hex, from a
paste, a dump or a log, and print their field trees.

The hex comes from the arguments (joined), from -f FILE, or from standard
input (at most --max-input-memory of it). Spaces, newlines, commas, 0x
prefixes and \x escapes are ignored, and dumps are understood: hexdump -C,
xxd, Wireshark's "Copy as Hex Dump", kwire read -x and decode -x (offsets,
ASCII columns and field names are dropped), librdkafka's protocol
hexdumps, Netty's prettyHexDump (as Java clients and proxies log a
buffer), and tcpdump -X and -XX (the packet's TCP payload is decoded).

Hex inside log lines is found: on a line that is not all hex, the text
around the hex is skipped with a note on stderr (its runs of hex
withheld): "... sent 00000013...0064 (23 bytes) traceId=4bf9...". The hex
read is a run of hex bytes between words of text; for frames, every run
whose first 4 bytes count the rest, each a frame (up to 8 leading hex
words may be left out, and one word of 8 bytes or more, a trace ID, may
follow); else the longest run, of at least 4 bytes at the line's end or
8 before more text. A port or offset and its colon before it are text
("10.0.0.5:9092: 0000..."). So is the text a logger writes before each
line of a dump, and lines that hold no bytes ("... Sent MetadataRequest
(v12, 46 bytes)"). Base64 (bytes as JSON carries them, kwire read
--json's bodies among them) is not hex: base64 -d | xxd -p turns it into
hex, and the error says so.

The input may hold several frames, each decoded in turn (under a heading
"frame N of M, line L, B bytes:", or a JSON line each): a frame ends
where a dump's offset starts over, at a line of text between lines of
hex (a log line), and, for frames (not bodies or structs), where its
first 4 bytes say it ends, when hex follows on the next line. Without
flags, a frame that does not decode as a request, but decodes whole as
the response to a request before it with its correlation ID, is decoded
as that response, with a note.

A frame that does not decode as a request but does as a response (which
names no API) gets a hint naming the responses it fits; so do bytes
copied without the frame's 4-byte length (the hint gives the length that
makes them decode), a whole frame given as a bare body (--frame), and a
whole captured packet (tshark -x: Ethernet, IP and TCP headers first; the
hint says at which offset its Kafka frame starts).

What the bytes are:
  (no flags)                          a whole request frame: length, header, body
  --frame --response --api A --version V
                                      a whole response frame (a response does
                                      not name its API: give it)
  --request|--response --api A --version V
                                      a bare request or response body
  --type NAME --version V             a header or non-RPC struct, e.g.
                                      RequestHeader, ConsumerProtocolSubscription;
                                      the consumer protocol's structs, Kafka
                                      Connect's (ConnectProtocolMetadata,
                                      ConnectProtocolAssignment) and
                                      DefaultPrincipalData as Kafka writes them,
                                      their INT16 version first (as read -V shows
                                      them; --version may then be left out), or
                                      without it
  --type RecordBatch                  record batches (or a legacy message set),
                                      as found in a RECORDS field

A is an API key or name (see 'kwire apis').

Output: the field tree (default), -x the annotated hex dump, or --json one
JSON document.

Exit status: 0 decoded; 1 decoded with errors (everything decoded before the
error is still printed, the error goes to stderr, naming the frame when
there are several), an --api key kwire does not know among them (the bytes
are kept raw), or input past --max-input-memory (the whole lines before it
are decoded); 2 usage error (an unknown API name, struct or version among
them) or unusable input (bad hex, an odd number of digits, no input, a
frame shorter than its 4-byte length prefix, every frame so).`,
		Example: `  # A request frame: ApiVersions v0 from client "wire-read"
  kwire decode 0000001300120000010203040009776972652d72656164

  # The same from a hexdump, as an annotated hex dump
  hexdump -C frame.bin | kwire decode -x

  # A Metadata v12 response frame, as JSON
  kwire decode --frame --response --api Metadata --version 12 -f resp.hex --json

  # A bare Produce v9 request body
  kwire decode --request --api 0 --version 9 -f body.hex

  # A consumer group subscription as read -V shows it in JoinGroup's
  # protocol metadata, its version (0003) first: topic "orders"
  kwire decode --type ConsumerProtocolSubscription 00030000000100066f7264657273ffffffff00000000ffffffffffff

  # A frame from a log line: the text around the hex is skipped
  kwire decode '[12:00:01] DEBUG sent 0000001300120000010203040009776972652d72656164 (23 bytes)'

  # Every frame a client logged, dumps and all
  kwire decode -f client.log`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.versionSet = cmd.Flags().Changed("version")
			if err := jsonInt64Needs(cmd, o.JSON); err != nil {
				return err
			}
			return runDecode(o, s, g.colorEnabled(s), args)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.File, "file", "f", "", "read the hex from `FILE` (- for stdin)")
	f.StringVar(&o.API, "api", "", "API key or name of a body or response frame")
	f.IntVar(&o.Version, "version", 0, "API or struct version")
	f.BoolVar(&o.Request, "request", false, "the input is a request (body unless --frame)")
	f.BoolVar(&o.Response, "response", false, "the input is a response (body unless --frame)")
	f.BoolVar(&o.Frame, "frame", false, "the input is a whole frame starting with its 4-byte length (the default without --api)")
	f.StringVar(&o.Type, "type", "", "decode a header or non-RPC struct by `NAME`")
	f.BoolVarP(&o.HexDump, "hex", "x", false, "print an annotated hex dump instead of the tree")
	f.BoolVar(&o.JSON, "json", false, "print one JSON document")
	f.BoolVar(&o.Records, "records", true, "decode record batches inside RECORDS fields (--records=false keeps them raw)")
	addDecodeFlags(f, &o.MaxDecompressed, &o.MaxDecodeMemory)
	o.MaxInput = defaultMaxInputMemory
	f.Var(&o.MaxInput, "max-input-memory",
		"the most hex text read from -f or stdin, its lines counted 48 bytes each on top, e.g. 256MiB: past it reading stops, the frames in the whole lines read are decoded, and the exit status is 1 (2 when none was)")
	o.out.addFlags(f)
	exclusiveFlags(cmd, [2]string{"request", "response"}, [2]string{"json", "hex"},
		[2]string{"type", "api"}, [2]string{"type", "frame"})
	return cmd
}

func runDecode(o *decodeOptions, s *ioStreams, color bool, args []string) error {
	ropts, err := o.out.renderOptions(color)
	if err != nil {
		return err
	}
	if len(args) == 0 && (o.File == "" || o.File == "-") && s.InTTY {
		fmt.Fprintln(s.ErrOut, "kwire: reading hex from the terminal; end with Ctrl-D")
	}
	text, cut, err := o.input(s.In, args)
	if err != nil {
		return err
	}
	framed := o.Type == "" && (o.API == "" || o.Frame)
	frames, notes, err := render.ParseHexFrames(text, render.HexOptions{Framed: framed})
	if err != nil {
		if cut != nil {
			return &exitError{code: exitUsage, err: fmt.Errorf("%v; in the whole lines read: %w", cut, err)}
		}
		return &exitError{code: exitUsage, err: err}
	}
	if o.MaxDecodeMemory > 0 {
		// The text and its bytes, and one frame at a time: a quarter of
		// the decode memory.
		held := int64(len(text))
		for _, f := range frames {
			held += 2 * int64(len(f.Data))
		}
		setMemoryCeiling(memBase+held+pipeline.FrameMemory(int64(o.MaxDecodeMemory)), s.ErrOut)
	}
	for _, n := range notes {
		fmt.Fprintf(s.ErrOut, "kwire: %s\n", n)
	}
	text = "" // the frames hold their bytes: the text is not kept while they are decoded
	if framed {
		frames = tcpPayloads(frames, s.ErrOut)
	}
	err = o.decodeFrames(s, frames, ropts)
	if cut == nil {
		return err
	}
	// Bytes past the budget were not read: whatever the frames read
	// gave, the input was not all decoded.
	var ee *exitError
	if errors.As(err, &ee) && ee.code == exitUsage {
		return err
	}
	if err != nil && (ee == nil || ee.err != nil) {
		fmt.Fprintf(s.ErrOut, "kwire: %v\n", err)
	}
	return dataErrorf("%v", cut)
}

// decodeFrames decodes and prints each frame the hex held. One frame is
// printed as it is; several each after a heading ("frame 2 of 3, line 14,
// 27 bytes:"), or, with --json, as one JSON document a line each. A
// frame's error goes to stderr, naming the frame, and the next is decoded:
// the exit status is 1 when a frame did not decode, 2 when none did and
// all failed alike as unusable (one error then, said once).
func (o *decodeOptions) decodeFrames(s *ioStreams, frames []render.HexFrame, ropts render.Options) error {
	if len(frames) == 0 {
		return &exitError{code: exitUsage, err: errors.New("no frame to decode: the packets dumped carry no TCP payload")}
	}
	if len(frames) == 1 {
		return o.decodeFrame(s, frames[0].Data, ropts)
	}
	type failure struct {
		frame render.HexFrame
		n     int
		err   error
	}
	var (
		failed  []failure // the first maxFrameErrors
		nfailed int
		alike   = true // every failure's message is the first's
		usage   int
		out     = s.Out
		shown   int
	)
	if o.API == "" && o.Type == "" && !o.Request && !o.Response {
		o.pairs = &requestPairs{byCorr: map[int32]pairedRequest{}}
	}
	for i, f := range frames {
		if o.pairs != nil {
			o.pairs.frame, o.pairs.note = i+1, ""
		}
		fs := *s
		if !o.JSON {
			// The heading is written with the frame's first output: a
			// frame refused as unusable has none.
			sep := ""
			if shown > 0 {
				sep = "\n"
			}
			fs.Out = &headed{w: out, heading: fmt.Sprintf("%sframe %d of %d, line %d, %d bytes:\n", sep, i+1, len(frames), f.Line, len(f.Data))}
		}
		err := o.decodeFrame(&fs, f.Data, ropts)
		frames[i].Data = nil // decoded: not kept while the rest are
		if h, ok := fs.Out.(*headed); ok && h.heading == "" {
			shown++
		}
		if o.pairs != nil && o.pairs.note != "" {
			fmt.Fprintf(s.ErrOut, "kwire: frame %d (line %d): %s\n", i+1, f.Line, o.pairs.note)
		}
		if err == nil {
			continue
		}
		var ee *exitError
		if errors.As(err, &ee) && ee.code == exitUsage {
			usage++
		}
		if nfailed++; len(failed) == 0 || err.Error() != failed[0].err.Error() {
			alike = alike && len(failed) == 0
		}
		if len(failed) < maxFrameErrors {
			failed = append(failed, failure{f, i + 1, err})
		} else {
			o.noHints = true
		}
	}
	if nfailed == 0 {
		return nil
	}
	if usage == len(frames) && alike {
		return failed[0].err // a flag's problem, or the same one with each frame: said once
	}
	for _, f := range failed {
		fmt.Fprintf(s.ErrOut, "kwire: frame %d (line %d): %v\n", f.n, f.frame.Line, f.err)
	}
	if nfailed > len(failed) {
		fmt.Fprintf(s.ErrOut, "kwire: … %d more frames did not decode (%d of %d in all)\n", nfailed-len(failed), nfailed, len(frames))
	}
	if usage == len(frames) {
		return &exitError{code: exitUsage}
	}
	return &exitError{code: exitData}
}

// maxFrameErrors bounds the frames whose errors decodeFrames says, and
// gives hints for: the rest are counted.
const maxFrameErrors = 32

// headed writes heading before the first bytes written to w.
type headed struct {
	w       io.Writer
	heading string
}

func (h *headed) Write(p []byte) (int, error) {
	if h.heading != "" && len(p) > 0 {
		if _, err := io.WriteString(h.w, h.heading); err != nil {
			return 0, err
		}
		h.heading = ""
	}
	return h.w.Write(p)
}

// decodeFrame decodes one frame (or body, or struct) as the flags say
// and prints it; the decoding error, if any, is returned.
func (o *decodeOptions) decodeFrame(s *ioStreams, data []byte, ropts render.Options) error {
	o.hint = ""
	tree, err := o.decode(data, ropts)
	if err != nil {
		return err
	}
	// The decoding error goes to stderr only (below); the JSON document
	// keeps it as its "error" field, which is data.
	shown := *tree
	shown.Err = nil
	switch {
	case o.JSON:
		err = render.TreeJSON(s.Out, tree, ropts)
	case o.HexDump:
		err = render.Hex(s.Out, &shown, ropts)
	default:
		err = render.Tree(s.Out, &shown, ropts)
	}
	if err != nil {
		return &exitError{code: exitData, err: err}
	}
	if tree.Err != nil {
		if errors.Is(tree.Err, protocol.ErrUnknownAPI) && o.API != "" {
			shown := "withheld (--show-secrets shows them)"
			if o.out.ShowSecrets {
				shown = "shown raw"
			}
			return dataErrorf("--api %s: API key %s is unknown (see 'kwire apis'); the bytes are %s", o.API, strings.TrimSpace(o.API), shown)
		}
		if o.hint != "" {
			return dataErrorf("decode error: %v\nkwire: %s", tree.Err, o.hint)
		}
		if errors.Is(tree.Err, protocol.ErrUnknownVers) && o.API == "" && len(data) >= 8 {
			// A request frame at a version no schema defines: say which
			// the schemas do (read says so in its note).
			return dataErrorf("decode error: %v; in kwire's schemas, %s (a newer Kafka's version, or bytes that are not this request)",
				tree.Err, knownVersions(int16(binary.BigEndian.Uint16(data[4:]))))
		}
		return dataErrorf("decode error: %v", tree.Err)
	}
	if n := tree.FirstError(); n != nil {
		// A record batch's problem (bad CRC, corrupt compressed data)
		// is on its node, not in tree.Err.
		where := fmt.Sprintf("offset %#x", n.Off)
		if n.Space > 0 && n.Space < len(tree.Spaces) {
			where += " in " + tree.Spaces[n.Space].Name
		}
		return dataErrorf("decode error: %s: %s (%s)", n.Name, n.Note, where)
	}
	return nil
}

// defaultMaxInputMemory is --max-input-memory's default: 64 MiB of hex
// text and its lines (lineCost each): about 33 MiB of plain hex in lines
// of 60 digits (a 16 MiB frame), a 7 MiB frame as hexdump -C.
const defaultMaxInputMemory = 64 << 20

// lineCost is what each line of the input costs on top of its bytes, in
// --max-input-memory: the parser's line slices and dump bookkeeping (a
// string header in three of them, an offset), about 48 bytes. Input of
// newlines alone would otherwise take 40 times its size.
const lineCost = 48

// inputCut says that the input ran past --max-input-memory: reading
// stopped there, and the text kept ends with the last whole line that fit.
type inputCut struct {
	max  int64 // --max-input-memory
	need int64 // what the whole input needs (text and lines), when known; else -1
}

func (c *inputCut) Error() string {
	raise := 2 * c.max
	need := "more"
	if c.need > c.max {
		unit := int64(1 << 20) // in whole MiB, or KiB below one
		if c.need < unit {
			unit = 1 << 10
		}
		raise = (c.need + unit - 1) &^ (unit - 1)
		need = fmt.Sprintf("about %v, more", byteSize(raise))
	}
	return fmt.Sprintf("the input needs %s than --max-input-memory allows (%v: its text and %d bytes a line): reading stopped there, and only the whole lines read were decoded; raise it, e.g. --max-input-memory %v",
		need, byteSize(c.max), lineCost, byteSize(raise))
}

// input returns the hex text from the arguments, -f or stdin: at most
// --max-input-memory bytes of -f or stdin, cut to the last whole line
// when there is more (cut says so).
func (o *decodeOptions) input(stdin io.Reader, args []string) (text string, cut *inputCut, err error) {
	if o.MaxInput <= 0 {
		return "", nil, usageErrorf("--max-input-memory must be positive")
	}
	switch {
	case len(args) > 0 && o.File != "":
		return "", nil, usageErrorf("give the hex as arguments or with -f, not both")
	case len(args) > 0:
		return strings.Join(args, " "), nil, nil
	case o.File != "" && o.File != "-":
		f, err := os.Open(o.File)
		if err != nil {
			return "", nil, &exitError{code: exitUsage, err: err}
		}
		defer f.Close()
		text, cut, err := readBounded(f, int64(o.MaxInput))
		if err != nil {
			return "", nil, &exitError{code: exitUsage, err: fmt.Errorf("reading %s: %w", o.File, err)}
		}
		return text, cut, nil
	}
	text, cut, err = readBounded(stdin, int64(o.MaxInput))
	if err != nil {
		return "", nil, &exitError{code: exitUsage, err: fmt.Errorf("reading stdin: %w", err)}
	}
	return text, cut, nil
}

// readBounded reads r to its end or until its text and lines (lineCost
// each) cost max bytes, whichever comes first: past max, the text is cut
// after the last newline that fits (a line cut short is not read as a
// shorter frame) and cut says so, with what the whole input needs when
// that is known (it was read whole, or r is a regular file: estimated
// from its size). An input that never ends (/dev/zero, a pipe from yes)
// costs at most max bytes, twice while it is read.
func readBounded(r io.Reader, max int64) (string, *inputCut, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return "", nil, err
	}
	cost, fits := int64(0), 0
	for i, c := range b {
		cost++
		if c == '\n' {
			if cost += lineCost; cost <= max {
				fits = i + 1
			}
		}
	}
	cost += lineCost // the last line
	if int64(len(b)) <= max && cost <= max {
		return string(b), nil, nil
	}
	cut := &inputCut{max: max, need: -1}
	if int64(len(b)) <= max {
		cut.need = cost // read whole
	} else if f, ok := r.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && len(b) > 0 {
			cut.need = int64(float64(st.Size()) * float64(cost) / float64(len(b)))
		}
	}
	return string(b[:fits]), cut, nil
}

// decode picks the decoder entry point the flags ask for. Only usage
// errors are returned; decoding problems are in the tree.
func (o *decodeOptions) decode(data []byte, ropts render.Options) (*protocol.Tree, error) {
	d := &protocol.Decoder{Records: o.Records, ShowSecrets: o.out.ShowSecrets}
	if err := decoderLimits(d, o.MaxDecompressed, o.MaxDecodeMemory, ropts); err != nil {
		return nil, err
	}
	if o.versionSet && (o.Version < 0 || o.Version > protocol.MaxVersion) {
		return nil, usageErrorf("--version %d is out of range", o.Version)
	}
	ver := int16(o.Version)
	needVersion := func(what string) error {
		if !o.versionSet {
			return usageErrorf("%s needs --version", what)
		}
		return nil
	}

	if o.Type != "" {
		if o.Request || o.Response {
			return nil, usageErrorf("--type decodes a struct; drop --request/--response")
		}
		if strings.EqualFold(o.Type, protocol.Batch.Batch.Name) {
			// Record batches carry their own version (magic byte).
			return d.DecodeRecordBatches(data), nil
		}
		name, vers, err := resolveStruct(o.Type)
		if err != nil {
			return nil, usageErrorf("--type: %v", err)
		}
		if protocol.VersionPrefixed(name) {
			t, ok := o.decodeVersioned(d, name, vers, data)
			if ok {
				return t, nil
			}
			if t != nil && !o.versionSet {
				return nil, usageErrorf("--type %s needs --version: the bytes do not decode as one with its version first (%v)", name, t.Err)
			}
		}
		if err := needVersion("--type"); err != nil {
			return nil, err
		}
		if !vers.Contains(ver) {
			return nil, usageErrorf("--version %d: %s has versions %s", ver, name, versionRange(vers))
		}
		t := d.DecodeStruct(name, ver, data)
		if t.Err != nil && protocol.VersionPrefixed(name) && len(data) >= 2 {
			if p := int16(uint16(data[0])<<8 | uint16(data[1])); p != ver && vers.Contains(p) && d.DecodeVersioned(name, data).Err == nil {
				o.hint = fmt.Sprintf("the bytes are a %s v%d as Kafka writes it, its version (%02x %02x) first: give --version %d, or leave --version out", name, p, data[0], data[1], p)
			}
		}
		return t, nil
	}

	if o.API == "" {
		if o.Response {
			return nil, usageErrorf("a response does not carry its API key: give --api and --version")
		}
		if o.versionSet || o.Request && !o.Frame {
			return nil, usageErrorf("a bare request body needs --api and --version; a request frame names its own API and version")
		}
		if err := checkFrame(data); err != nil {
			return nil, err
		}
		t := d.DecodeRequest(data)
		if p := o.pairs; p != nil && len(data) >= 8 {
			// Request header: key, version, correlation ID after the
			// length; a response header: the correlation ID.
			if t.Err == nil && t.FirstError() == nil && len(data) >= 12 {
				p.add(int32(binary.BigEndian.Uint32(data[8:])), pairedRequest{
					key: int16(binary.BigEndian.Uint16(data[4:])), version: int16(binary.BigEndian.Uint16(data[6:])), frame: p.frame})
			} else if r, ok := p.byCorr[int32(binary.BigEndian.Uint32(data[4:]))]; ok {
				if resp := d.DecodeResponse(data, r.key, r.version); resp.Err == nil && resp.FirstError() == nil {
					t.Release()
					p.note = fmt.Sprintf("decoded as the response to frame %d (%s v%d, correlation ID %d): it does not decode as a request, and decodes whole as that response",
						r.frame, protocol.APIName(r.key), r.version, int32(binary.BigEndian.Uint32(data[4:])))
					return resp, nil
				} else {
					resp.Release()
				}
			}
		}
		if t.Err != nil && !errors.Is(t.Err, protocol.ErrUnknownVers) {
			// (A header that decoded, naming a version no schema
			// defines, is a request: no guess at a response.)
			if !o.noHints {
				o.hint = cmp.Or(packetHint(d, data), noLengthHint(d, data), responseHint(data))
			}
		}
		return t, nil
	}

	key, err := parseAPI(o.API)
	if err != nil {
		return nil, usageErrorf("--api: %v", err)
	}
	if err := needVersion("--api"); err != nil {
		return nil, err
	}
	if !o.Request && !o.Response {
		return nil, usageErrorf("say whether the input is a --request or a --response")
	}
	known := slices.ContainsFunc(protocol.APIs(), func(a protocol.APIInfo) bool { return a.Key == key })
	if known && protocol.Lookup(key, o.Response, ver) == nil {
		return nil, usageErrorf("--version %d: %s", ver, knownVersions(key))
	}
	if !o.Frame {
		t := d.DecodeBody(key, ver, o.Response, data)
		if t.Err != nil {
			if !o.noHints {
				o.hint = wholeFrameHint(d, data, key, ver, o.Response)
			}
		}
		return t, nil
	}
	if o.Request {
		return nil, usageErrorf("a request frame names its own API and version: drop --api and --version")
	}
	if err := checkFrame(data); err != nil {
		return nil, err
	}
	return d.DecodeResponse(data, key, ver), nil
}

// decodeVersioned decodes a struct that Kafka serializes after its own
// INT16 version (ConsumerProtocolSubscription, ConsumerProtocolAssignment,
// ConnectProtocolMetadata, ConnectProtocolAssignment, DefaultPrincipalData), as -V and -x show it and as it sits in JoinGroup
// and SyncGroup: with the version prefix when the bytes start with it
// (--version, when given, must match it; without --version the prefix
// says it). It reports false when the bytes are the struct alone, at
// --version, which DecodeStruct then decodes: when they do not start with
// --version, or decode only that way, or (with the tree, to say why) when
// there is no --version and they do not decode with their prefix.
func (o *decodeOptions) decodeVersioned(d *protocol.Decoder, name string, vers protocol.Versions, data []byte) (*protocol.Tree, bool) {
	if len(data) < 2 {
		return nil, false
	}
	prefix := int16(uint16(data[0])<<8 | uint16(data[1]))
	if o.versionSet && int(prefix) != o.Version || !vers.Contains(prefix) && o.versionSet {
		return nil, false
	}
	t := d.DecodeVersioned(name, data)
	switch {
	case t.Err == nil:
	case !o.versionSet:
		return t, false
	case d.DecodeStruct(name, prefix, data).Err == nil:
		return nil, false // the struct alone, whose first bytes equal its version
	}
	return t, true
}

// responseHintMax is the largest frame responseHint tries (64 KiB: about
// 0.3 s of CPU at worst).
const responseHintMax = 64 << 10

// responseHint says, for a frame that fails to decode as a request, which
// responses decode it whole (a response carries no API key: decode needs
// to be told), or "". A frame over responseHintMax gets none: every
// response schema is tried, and most read a hostile frame to its end (a
// 1.6 MB line of "0000ffff00000000" took 9 s).
func responseHint(data []byte) string {
	if len(data) > responseHintMax {
		return ""
	}
	var p protocol.Prober
	c := p.Candidates(data)
	if len(c) == 0 {
		return ""
	}
	api := protocol.APIName(c[0].Key)
	if len(c) == 1 {
		return fmt.Sprintf("the frame looks like a response: it decodes whole as a %s v%d response; try kwire decode --frame --response --api %s --version %d",
			api, c[0].Version, api, c[0].Version)
	}
	var some []string
	for _, a := range c[:min(3, len(c))] {
		some = append(some, fmt.Sprintf("%s v%d", protocol.APIName(a.Key), a.Version))
	}
	if len(c) > 3 {
		some = append(some, fmt.Sprintf("%d more", len(c)-3))
	}
	return fmt.Sprintf("the frame may be a response: the responses of %d API versions decode it whole (%s); give --frame --response --api API --version V",
		len(c), strings.Join(some, ", "))
}

// packetHint says, for input that fails to decode as a request frame,
// whether it is a whole captured packet (Ethernet, Linux cooked capture,
// BSD loopback or raw IPv4/IPv6, then TCP: tshark -x, or Wireshark's
// Copy as Hex Dump of a packet's every byte) whose TCP payload is a
// Kafka frame, and where that starts; "" when it is not. Decoding the
// headers is gopacket's (its layers' decoders).
func packetHint(d *protocol.Decoder, data []byte) string {
	for _, first := range []gopacket.LayerType{layers.LayerTypeEthernet, layers.LayerTypeLinuxSLL, layers.LayerTypeLoopback, layers.LayerTypeIPv4, layers.LayerTypeIPv6} {
		p := gopacket.NewPacket(data, first, gopacket.DecodeOptions{Lazy: true, NoCopy: true})
		tcp, ok := p.Layer(layers.LayerTypeTCP).(*layers.TCP)
		if !ok || p.ErrorLayer() != nil || len(tcp.Payload) < 8 {
			continue
		}
		payload := tcp.Payload
		off := len(data) - len(payload)
		if off < 0 || off >= len(data) || &data[off] != &payload[0] {
			continue // not the input's last bytes (trailing padding)
		}
		var names []string
		for _, l := range p.Layers() {
			if l.LayerType() == gopacket.LayerTypePayload {
				break
			}
			names = append(names, l.LayerType().String())
		}
		lead := fmt.Sprintf("the bytes are a whole packet (%s, %d bytes of headers before the TCP payload, port %d → %d)", strings.Join(names, ", "), off, tcp.SrcPort, tcp.DstPort)
		t := d.DecodeRequest(payload)
		whole := t.Err == nil && t.FirstError() == nil
		t.Release()
		switch {
		case whole:
			return fmt.Sprintf("%s: its payload, the %d bytes from offset 0x%x on, decodes whole as a request frame, %s v%d; give kwire decode those bytes (Wireshark: select the Kafka layer, then Copy, ...as Hex Dump)",
				lead, len(payload), off, protocol.APIName(int16(binary.BigEndian.Uint16(payload[4:]))), int16(binary.BigEndian.Uint16(payload[6:])))
		case frameLength(payload):
			if h := responseHint(payload); h != "" {
				return fmt.Sprintf("%s: its payload, the %d bytes from offset 0x%x on, is a frame; %s", lead, len(payload), off, h)
			}
		}
		return fmt.Sprintf("%s: decode its payload, the %d bytes from offset 0x%x on (a frame starts with its 4-byte length: a TCP segment may hold a frame's middle)", lead, len(payload), off)
	}
	return ""
}

// frameLength reports whether data starts with a frame's length: its
// first 4 bytes count the bytes after them.
func frameLength(data []byte) bool {
	return len(data) >= 4 && int64(binary.BigEndian.Uint32(data)) == int64(len(data))-4
}

// noLengthHint says, for input that fails to decode as a request frame
// and whose first 4 bytes are not its length, what it decodes whole as
// once its length is put before it: a frame copied without its length
// prefix, as a client's log may give one (header and body). "" when it
// does not.
func noLengthHint(d *protocol.Decoder, data []byte) string {
	if frameLength(data) || len(data) < 8 || len(data) > math.MaxInt32 {
		return ""
	}
	framed := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(data)), uint32(len(data)))
	framed = append(framed, data...)
	prefix := hex.EncodeToString(framed[:4])
	t := d.DecodeRequest(framed)
	whole := t.Err == nil && t.FirstError() == nil
	t.Release()
	if whole {
		key, ver := int16(binary.BigEndian.Uint16(data)), int16(binary.BigEndian.Uint16(data[2:]))
		return fmt.Sprintf("the bytes lack a frame's 4-byte length: with %s (the %d bytes given) before them, they decode whole as a request frame, %s v%d",
			prefix, len(data), protocol.APIName(key), ver)
	}
	// A response's first 4 bytes are its correlation ID; read as a
	// length, one that claims more than the bytes given is more likely
	// a frame cut short than a length left out: no guess then.
	if claimed := int64(binary.BigEndian.Uint32(data)); claimed > int64(len(data))-4 {
		return ""
	}
	if h := responseHint(framed); h != "" {
		return fmt.Sprintf("the bytes lack a frame's 4-byte length: with %s (the %d bytes given) before them, %s", prefix, len(data), h)
	}
	return ""
}

// wholeFrameHint says, for input that fails to decode as the bare body
// --request or --response --api --version say, whether it is a whole
// frame of that API instead (its first 4 bytes its length, then a
// header): "" when it is not.
func wholeFrameHint(d *protocol.Decoder, data []byte, key, ver int16, response bool) string {
	if !frameLength(data) {
		return ""
	}
	var t *protocol.Tree
	if response {
		t = d.DecodeResponse(data, key, ver)
	} else {
		t = d.DecodeRequest(data)
	}
	whole := t.Err == nil && t.FirstError() == nil
	t.Release()
	if !whole {
		return ""
	}
	lead := fmt.Sprintf("the bytes are a whole frame, not a bare body: their first 4 bytes (%s) count the %d after them, and as a frame they decode whole", hex.EncodeToString(data[:4]), len(data)-4)
	if response {
		return lead + "; add --frame"
	}
	return fmt.Sprintf("%s (a request, %s v%d); drop --request, --api and --version (a request frame names its API and version)",
		lead, protocol.APIName(int16(binary.BigEndian.Uint16(data[4:]))), int16(binary.BigEndian.Uint16(data[6:])))
}

// checkFrame rejects input too short to be a frame. A frame whose length
// prefix claims more bytes than given is decoded as far as it goes.
func checkFrame(data []byte) error {
	if len(data) < 4 {
		return &exitError{code: exitUsage, err: fmt.Errorf("%d byte%s cannot be a frame: a frame starts with a 4-byte length", len(data), plural(len(data)))}
	}
	if int32(uint32(data[0])<<24|uint32(data[1])<<16|uint32(data[2])<<8|uint32(data[3])) < 0 {
		return &exitError{code: exitUsage, err: errors.New("negative frame length: the input does not start with a frame's 4-byte length (a bare body needs --api, --version and --request or --response)")}
	}
	return nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
