package protocol

import (
	"fmt"
	"strconv"
)

// This file is the decoder's public entry points. The interpreter that walks
// the schema table lives in interp.go, primitives in reader.go, header
// version rules in headers.go.
//
// Tree shapes:
//
//	DecodeRequest(frame)   Root "RequestFrame" (Type "frame", Note "Produce v9"):
//	                         "Length" (int32), "RequestHeader" (Note "v2"),
//	                         "ProduceRequest" (Note "v9") — the body
//	DecodeResponse(...)    Root "ResponseFrame": "Length", "ResponseHeader", body
//	DecodeBody(...)        Root is the body node ("ProduceRequest", Note "v9")
//	DecodeStruct(...)      Root is the struct ("ConsumerProtocolSubscription")
//
// FrameParts returns the three children of a frame root. An unknown API key
// or version gives a KindRaw body with FlagUnknown, named "UNKNOWN(key)" or
// after the message, and Tree.Err wrapping ErrUnknownAPI or ErrUnknownVers:
// not fatal, the header is still decoded. A failure leaves an "undecoded"
// KindRaw node (FlagError) as the last child of the message being decoded;
// bytes after a complete message become a "leftover" node (ErrLeftover).

// Decoder decodes Kafka frames, bodies and structs into Trees. The zero
// value is ready to use; its fields are options. A Decoder holds no state
// between calls and may be used concurrently.
type Decoder struct {
	// Records enables decoding of RECORDS fields into record batches and
	// records (decompressing them). When false they stay raw spans.
	Records bool
	// BatchHeadersOnly, with Records, decodes the headers of record
	// batches (magic 2) and checks their CRC, but does not decompress or
	// decode their records: a batch's "Records" node keeps its declared
	// count (Int) and its span and gets no children. Legacy message sets
	// (magic 0 and 1) are still decoded in full. For one-line summaries,
	// which show batch offsets, counts, codecs and sizes only. A batch
	// damaged in transit still shows as an error (its CRC); what only
	// decoding the records finds (a crafted batch with a valid CRC whose
	// compressed data or records are malformed, MaxDecompressed or
	// MaxNodes exceeded) does not.
	BatchHeadersOnly bool
	// MaxDecompressed caps the bytes that all compressed batches of one
	// decoded tree (one frame) may inflate to together: what decompressing
	// may cost in time, and what a decompression bomb is. Past it the
	// stream is cut: its records up to the cap are decoded, the batch is
	// marked an error whose note gives the size its codec's header or
	// trailer claims, and Tree.Limits has LimitDecompressed. 0 means
	// DefaultMaxDecompressed.
	MaxDecompressed int64
	// MaxMemory caps the memory decoding one tree (one frame) may take
	// beyond the frame's own bytes, in bytes: decompressed bytes kept,
	// decompressor state, nodes. Past it the rest stays raw or is not
	// decompressed, with a note, and Tree.Limits has LimitMemory. It is
	// the decoder's own accounting, an estimate (nodeCost bytes a node,
	// counted 256 at a time; buffers at the size asked for, not what the
	// pools hand out): where a frame stops depends on the frame alone. 0
	// means DefaultMaxMemory; negative, no bound.
	MaxMemory int64
	// KeepValue, when positive, keeps only the first KeepValue bytes of
	// each key, value, header key and header value of the records in
	// compressed batches, and of bytes left undecoded after them: the rest
	// is omitted (FlagOmitted, Node.RawLen, Space.Omitted) and costs no memory, so a
	// record of a 250 MiB value costs KeepValue bytes. Renderers that cut
	// values at their first KeepValue bytes lose nothing. Legacy message
	// sets and control batches are kept whole. 0 keeps everything; a
	// negative value keeps none of those bytes (for consumers that count
	// records and never show a value).
	KeepValue int
	// Budget, when not nil, is asked for the memory MaxMemory counts
	// before the decoder takes it, and is given it back when the tree is
	// released (Tree.Release): the memory of several frames decoded at
	// once, shared. A refusal is handled as MaxMemory is.
	Budget Budget
	// MaxNodes caps the nodes of one decoded tree (one frame), record
	// batches and records included; 0 means DefaultMaxNodes, or as many
	// nodes as MaxMemory pays for (nodeCost bytes each) when that is
	// more, so that a larger memory bound decodes larger frames (a
	// Metadata response of 100,000 partitions is about 1.5 million
	// nodes). Past it the rest of the input stays raw (ErrTooManyNodes),
	// so that a small frame of millions of empty records or array
	// elements — or a compressed batch of them — cannot exhaust memory.
	MaxNodes int
	// ShowSecrets keeps secrets (secrets.go: SASL passwords, proofs and
	// tokens, delegation-token HMACs, SCRAM credentials, sensitive config
	// values) visible; by default their nodes are marked FlagRedacted and
	// their values emptied.
	ShowSecrets bool
	// SASLMechanism is the mechanism negotiated by SaslHandshake on the
	// connection ("PLAIN", "SCRAM-SHA-256", ...), by which the AuthBytes of
	// SaslAuthenticate requests and responses are split; when empty the
	// token's shape decides (ParseSASLToken).
	SASLMechanism string
	// Sparse decodes bodies for the facts alone (package facts): a field
	// whose value means nothing to them (no Role, no secret, not bytes
	// or records, nothing such inside it) is read and checked as always
	// but gets no node (sparse.go). Tree.Err, Tree.FirstError and the
	// nodes kept are those of a full decode, and facts.Of gives the same
	// facts, but at MaxNodes and MaxMemory, which count the nodes made
	// and so are reached later (or not at all); the tree is not for
	// rendering (-V, -x, JSON) or for reading fields by name: record
	// batch headers also lack their informational notes (codec, times,
	// last offset; error notes stay). Headers are always decoded whole.
	// For readers of facts.
	Sparse bool
	// SparseDrop, with Sparse, are roles whose facts the caller does not
	// read: a field with one of them is read without a node, with all it
	// holds, and the facts built from the tree lack what it says (kwire
	// read's lines drop the API version ranges and features of every
	// ApiVersions response, most of a short connection's nodes).
	SparseDrop RoleSet
}

// DefaultMaxDecompressed is the default cap on one frame's decompressed bytes (256 MiB).
const DefaultMaxDecompressed = 256 << 20

// DefaultMaxMemory is the default cap on the memory decoding one frame may
// take (Decoder.MaxMemory): 256 MiB, what DefaultMaxNodes nodes take
// (about 200 bytes each), so that the node cap is reached first.
const DefaultMaxMemory = 256 << 20

// A Budget accounts memory shared by several decodes (Decoder.Budget).
// Reserve asks for n bytes and reports whether they were granted; a
// negative n gives bytes back (and always succeeds). It must be safe for
// concurrent use when decodes run at once.
type Budget interface {
	Reserve(n int64) bool
}

// Limits says which of the decoder's bounds a tree reached (Tree.Limits).
type Limits uint8

// Bounds a tree may reach.
const (
	LimitDecompressed Limits = 1 << iota // a batch inflated past Decoder.MaxDecompressed
	LimitMemory                          // Decoder.MaxMemory or the Budget: the rest stayed raw
	LimitNodes                           // Decoder.MaxNodes
)

// maxMemory returns the memory cap in effect (0: none).
func (d *Decoder) maxMemory() int64 {
	switch {
	case d.MaxMemory == 0:
		return DefaultMaxMemory
	case d.MaxMemory < 0:
		return 0
	}
	return d.MaxMemory
}

// newTree returns a tree over b (space 0, named name) whose memory is
// accounted to d's limits.
func (d *Decoder) newTree(b []byte, name string) *Tree {
	t, ok := treePool.Get().(*Tree)
	if !ok {
		t = &Tree{}
	}
	t.space0[0] = Space{Name: name, Data: b}
	t.Spaces = t.space0[:1:1]
	t.mem.slabs, t.mem.ptrs = t.mem.slabs0[:0], t.mem.ptrs0[:0]
	t.mem.budget, t.mem.limit = d.Budget, d.maxMemory()
	return t
}

// DefaultMaxNodes is the default cap on one tree's nodes: 2^20 nodes of
// about 170 bytes each (plus a child pointer) bound a tree to about
// 190 MB. It is far above real frames: a 1 MB record batch of 100-byte
// records makes about 80,000 nodes (8 per record), a 50 MB Fetch response
// (fetch.max.bytes' default) of 1 KB records about 400,000.
const DefaultMaxNodes = 1 << 20

// NodeCap returns the node cap in effect (Decoder.MaxNodes).
func (d *Decoder) NodeCap() int { return d.maxNodes() }

// maxNodes returns the node cap in effect.
func (d *Decoder) maxNodes() int {
	if d.MaxNodes < 1 {
		return int(max(DefaultMaxNodes, d.maxMemory()/nodeCost))
	}
	return d.MaxNodes
}

// RequestHeader holds the request header fields needed to pair and label a
// request (Kafka protocol guide, "Request Header v0/v1/v2").
type RequestHeader struct {
	APIKey        int16  // RequestApiKey
	APIVersion    int16  // RequestApiVersion
	CorrelationID int32  // CorrelationId
	ClientID      string // ClientId (header v1+); "" in v0 or when null
	ClientIDNull  bool   // ClientId was null (length -1)
	// HeaderVersion is 0, 1 or 2 as RequestHeaderVersion says.
	HeaderVersion int16
	// Len is the header's length in bytes, tagged fields included; the body
	// starts Len bytes after the 4-byte length prefix.
	Len int
}

// Names of the frame-level nodes.
const (
	NameRequestFrame  = "RequestFrame"
	NameResponseFrame = "ResponseFrame"
	NameLength        = "Length"
)

var zeroDecoder Decoder

// DecodeRequest decodes a request frame with the zero Decoder.
func DecodeRequest(frame []byte) *Tree { return zeroDecoder.DecodeRequest(frame) }

// DecodeResponse decodes a response frame with the zero Decoder.
func DecodeResponse(frame []byte, key, version int16) *Tree {
	return zeroDecoder.DecodeResponse(frame, key, version)
}

// DecodeBody decodes a message body with the zero Decoder.
func DecodeBody(key, version int16, response bool, body []byte) *Tree {
	return zeroDecoder.DecodeBody(key, version, response, body)
}

// DecodeStruct decodes a header or data struct with the zero Decoder.
func DecodeStruct(name string, version int16, b []byte) *Tree {
	return zeroDecoder.DecodeStruct(name, version, b)
}

// FrameParts returns the length, header and body nodes of a Root built by
// DecodeRequest or DecodeResponse; any of them is nil when decoding did not
// get that far.
func FrameParts(root *Node) (length, header, body *Node) {
	if root == nil {
		return nil, nil, nil
	}
	for _, c := range root.Children {
		switch {
		case c.Name == NameLength && length == nil:
			length = c
		case c.Kind == KindStruct && c.Type == "header" && header == nil:
			header = c
		case header != nil && body == nil && c.Name != nameLeftover:
			body = c
		}
	}
	return length, header, body
}

// DecodeRequest decodes frame, a whole request frame: the 4-byte length
// prefix, the request header (version from RequestHeaderVersion) and the
// body. Offsets are relative to frame[0].
func (d *Decoder) DecodeRequest(frame []byte) *Tree {
	return d.decodeFrame(frame, false, 0, 0)
}

// DecodeResponse decodes frame, a whole response frame (4-byte length
// prefix, response header, body) to the request with API key key and
// version version, which the caller learnt by pairing correlation IDs.
func (d *Decoder) DecodeResponse(frame []byte, key, version int16) *Tree {
	return d.decodeFrame(frame, true, key, version)
}

func (d *Decoder) decodeFrame(frame []byte, response bool, key, version int16) *Tree {
	ip := getInterp()
	defer putInterp(ip)
	ip.reset(d, frame, "frame")
	r := &ip.r
	root := ip.newNode()
	root.Children = ip.children(3) // length, header, body (and a rare leftover)
	root.Kind, root.Type, root.Off, root.Len = KindStruct, "frame", 0, len(frame)
	root.Name = NameRequestFrame
	if response {
		root.Name = NameResponseFrame
	}
	ip.t.Root = root
	ip.msgName = root.Name

	// Length prefix.
	size := r.Int32()
	if r.err != nil {
		ip.capture()
		ip.undecoded(root, 0, len(frame))
		ip.t.Err = ip.err
		return ip.tree()
	}
	ln := ip.newNode()
	ln.Name, ln.Type, ln.Kind, ln.Off, ln.Len, ln.Int = NameLength, "int32", KindInt, 0, 4, int64(size)
	root.Children = append(root.Children, ln)
	end := len(frame)
	switch {
	case size < 0:
		r.Fail(0, &negativeError{n: int64(size)})
		ip.capture()
		ip.undecoded(root, 4, len(frame))
		ip.t.Err = ip.err
		return ip.tree()
	case int64(size) > int64(len(frame)-4):
		ln.Flags |= FlagTruncated
		root.Flags |= FlagTruncated
		ln.Note = fmt.Sprintf("frame truncated: %d of %d bytes present", len(frame)-4, size)
	default:
		end = 4 + int(size)
		ip.short = false
	}

	// Header.
	if !response && end-4 >= 4 {
		key = int16(uint16(frame[4])<<8 | uint16(frame[5]))
		version = int16(uint16(frame[6])<<8 | uint16(frame[7]))
	}
	var hv int16
	hname := "ResponseHeader"
	if response {
		hv = ResponseHeaderVersion(key, version)
	} else {
		hv = RequestHeaderVersion(key, version)
		hname = "RequestHeader"
	}
	root.Note = frameNote(key, version)
	hs := LookupName(hname, hv)
	if hs == nil {
		// The schema table lacks the header: nothing more can be read.
		ip.bodyUnknown(root, hname, fmt.Errorf("%w: no %s v%d in the schema table", ErrUnknownVers, hname, hv), 4, end)
		ip.finishFrame(root, end)
		return ip.tree()
	}
	hn := ip.newNode()
	ip.message(hs, hv, hn, end, false)
	root.Children = append(root.Children, hn)
	if ip.err != nil {
		// What the header left undecoded is the body too: withheld, as
		// every span not decoded (withholdRaw) is.
		if k := len(hn.Children); k > 0 && hn.Children[k-1].Name == nameUndecoded {
			ip.withholdRaw(hn.Children[k-1])
		}
		ip.finishFrame(root, end)
		return ip.tree()
	}

	// Body.
	bn := ip.newNode()
	ip.body(bn, key, version, response, end)
	root.Children = append(root.Children, bn)
	ip.embedded(bn, key, version, response, false)
	ip.finishFrame(root, end)
	return ip.tree()
}

// finishFrame reports bytes after the declared length and sets Tree.Err.
func (ip *interp) finishFrame(root *Node, end int) {
	b := ip.r.b
	if end < len(b) {
		ip.r.end = len(b)
		left := ip.rawNode(nameLeftover, end, len(b))
		left.Note = fmt.Sprintf("%d bytes after the frame's declared length", len(b)-end)
		ip.withholdRaw(left)
		root.Children = append(root.Children, left)
		if ip.err == nil {
			ip.err = &DecodeError{Off: end, Path: root.Name,
				Err: fmt.Errorf("%w: %d bytes after the frame", ErrLeftover, len(b)-end)}
		}
	}
	ip.t.Err = ip.err
}

// DecodeBody decodes body, the bytes of a request (response false) or
// response body of API key key at version version, without length prefix
// or header. Offsets are relative to body[0].
func (d *Decoder) DecodeBody(key, version int16, response bool, body []byte) *Tree {
	ip := getInterp()
	defer putInterp(ip)
	ip.reset(d, body, "body")
	root := ip.newNode()
	ip.t.Root = root
	ip.body(root, key, version, response, len(body))
	ip.embedded(root, key, version, response, false)
	ip.t.Err = ip.err
	return ip.tree()
}

// body decodes a message body from the reader's offset to end into n.
func (ip *interp) body(n *Node, key, ver int16, response bool, end int) {
	m, known := servingSchema(key, response, ver)
	if known {
		ip.sparse = ip.d.Sparse
		ip.message(m, ver, n, end, true)
		return
	}
	if m == nil {
		n.Name = "UNKNOWN(" + strconv.Itoa(int(key)) + ")"
		ip.bodyUnknownInto(n, fmt.Sprintf("unknown API key %d", key), unknownKey(key), ip.r.off, end)
		return
	}
	n.Name = m.Name
	ip.bodyUnknownInto(n, fmt.Sprintf("unknown version %d of %s", ver, m.Name),
		unknownVersion(key, m.Name, ver, fmt.Sprintf("%v %d", ErrUnknownVers, ver)), ip.r.off, end)
}

// bodyUnknown appends a FlagUnknown raw node named name to parent.
func (ip *interp) bodyUnknown(parent *Node, name string, err error, from, end int) {
	n := ip.newNode()
	n.Name = name
	ip.bodyUnknownInto(n, err.Error(), err, from, end)
	parent.Children = append(parent.Children, n)
}

func (ip *interp) bodyUnknownInto(n *Node, note string, err error, from, end int) {
	n.Kind, n.Type, n.Flags, n.Note = KindRaw, "bytes", FlagUnknown, note
	n.Off, n.Len, n.Raw = from, end-from, ip.r.b[from:end:end]
	if ip.err == nil {
		ip.err = &DecodeError{Off: from, Space: ip.space, Path: n.Name, Err: err}
	}
	ip.r.off = end
	ip.withholdRaw(n)
}

// DecodeStruct decodes b as version version of the named header or data
// struct ("RequestHeader", "ResponseHeader", "ConsumerProtocolSubscription",
// ...; any name in the schema table). An unknown name gives a FlagUnknown
// raw root and ErrUnknownAPI; an unknown version ErrUnknownVers.
func (d *Decoder) DecodeStruct(name string, version int16, b []byte) *Tree {
	var ip interp
	ip.reset(d, b, "struct")
	root := ip.newNode()
	ip.t.Root = root
	if m := LookupName(name, version); m != nil {
		ip.message(m, version, root, len(b), true)
		ip.t.Err = ip.err
		return ip.tree()
	}
	root.Name = name
	sentinel := ErrUnknownAPI
	for _, m := range Schemas {
		if m.Name == name {
			sentinel = ErrUnknownVers
			break
		}
	}
	note := "unknown struct " + name
	if sentinel == ErrUnknownVers {
		note = fmt.Sprintf("unknown version %d of %s", version, name)
	}
	var err error = fmt.Errorf("%w: %s", sentinel, note)
	if sentinel == ErrUnknownVers {
		err = unknownVersion(-1, name, version, err.Error())
	}
	ip.bodyUnknownInto(root, note, err, 0, len(b))
	ip.t.Err = ip.err
	return ip.tree()
}
