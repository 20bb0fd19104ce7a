package protocol

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// This file decodes BYTES fields whose contents are themselves Kafka
// structures: the consumer group protocol's subscriptions and assignments
// (ConsumerProtocolSubscription.json, ConsumerProtocolAssignment.json;
// KIP-429, KIP-341, KIP-881), Kafka Connect's group protocol's worker
// metadata and assignments (kwire's own ConnectProtocolMetadata.json and
// ConnectProtocolAssignment.json in protocol/schemas, after Kafka's
// ConnectProtocol.java and IncrementalCooperativeConnectProtocol.java;
// KIP-415 for v1, KIP-507 for v2) and the forwarded request of an
// Envelope (EnvelopeRequest.json, DefaultPrincipalData.json; KIP-590).
//
// As for control record values (records.go), the field node stays
// KindBytes with its Raw value (so JSON forms still print base64); its Type
// becomes the struct's name and the struct's fields become its children,
// in the same space, offsets absolute:
//
//	JoinGroupRequest Protocols[i].Metadata     ConsumerProtocolSubscription
//	JoinGroupResponse Members[i].Metadata      ConsumerProtocolSubscription
//	SyncGroupRequest Assignments[i].Assignment ConsumerProtocolAssignment
//	SyncGroupResponse Assignment               ConsumerProtocolAssignment
//	DescribeGroupsResponse Groups[i].Members[j].MemberMetadata
//	                                           ConsumerProtocolSubscription
//	DescribeGroupsResponse Groups[i].Members[j].MemberAssignment
//	                                           ConsumerProtocolAssignment
//	  children: Version int16 (the leading version), then the struct's
//	  fields at that version (Topics, UserData, OwnedPartitions, ... or
//	  AssignedPartitions, UserData)
//	  In a group of protocol type "connect" the same fields hold
//	  ConnectProtocolMetadata (Url, ConfigOffset, v1+ Allocation: itself
//	  a ConnectProtocolAssignment, decoded too) and
//	  ConnectProtocolAssignment (Error, Leader, LeaderUrl, ConfigOffset,
//	  Assignment, v1+ Revoked, Delay).
//	EnvelopeRequest RequestPrincipal           DefaultPrincipalData
//	  children: Version int16, Type, Name, TokenAuthenticated, TaggedFields
//	EnvelopeRequest RequestData                Type "request"
//	  children: RequestHeader and the request body, as in a request frame
//	  without its length prefix (Note "CreateTopics v7")
//
// The consumer structs are decoded when the group's protocol type is
// "consumer", the Connect structs when it is "connect" (JoinGroupRequest
// ProtocolType, JoinGroupResponse v7+ and SyncGroup v5+ ProtocolType;
// each described group's ProtocolType, which DescribeGroups always
// states: only then). When the message does not say, the consumer structs
// are decoded only if the bytes decode completely at the version their
// first two bytes give and that version is one the struct defines, and
// the Connect structs are not tried; another protocol type leaves them
// raw. Empty bytes stay empty. A failure inside the embedded bytes never
// fails the message: the bytes stay raw (no children) and, where they were
// expected to decode, the Note says why; the bytes of a Connect struct,
// which may hold a URL's userinfo, are then withheld. A Connect URL
// holding an '@' is withheld (secrets.go, SecretURL), and the BYTES node
// holding it is marked FlagRedacted so that its raw forms withhold its
// span.

// consumerProtocolType is the protocol type of Kafka consumer groups,
// connectProtocolType that of Kafka Connect workers' groups.
const (
	consumerProtocolType = "consumer"
	connectProtocolType  = "connect"
)

// embedded decodes the embedded structs of body, the decoded body of API
// key key at version ver. nested is set inside an Envelope's request, where
// a second Envelope is not unwrapped.
func (ip *interp) embedded(body *Node, key, ver int16, response, nested bool) {
	if body == nil || body.Kind != KindStruct {
		return
	}
	switch {
	case key == 11 && !response: // JoinGroupRequest
		gp, force, ok := groupProtocolOf(body.Child("ProtocolType"))
		for _, p := range arrayElems(body.Child("Protocols")) {
			if ok {
				ip.embedMetadata(p.Child("Metadata"), gp, force)
			}
			ip.withholdConnectLike(p.Child("Metadata"))
		}
	case key == 11: // JoinGroupResponse
		gp, force, ok := groupProtocolOf(body.Child("ProtocolType"))
		for _, m := range arrayElems(body.Child("Members")) {
			if ok {
				ip.embedMetadata(m.Child("Metadata"), gp, force)
			}
			ip.withholdConnectLike(m.Child("Metadata"))
		}
	case key == 14 && !response: // SyncGroupRequest
		gp, force, ok := groupProtocolOf(body.Child("ProtocolType"))
		for _, a := range arrayElems(body.Child("Assignments")) {
			if ok {
				ip.embedAssignment(a.Child("Assignment"), gp, force)
			}
			ip.withholdConnectLike(a.Child("Assignment"))
		}
	case key == 14: // SyncGroupResponse
		gp, force, ok := groupProtocolOf(body.Child("ProtocolType"))
		if ok {
			ip.embedAssignment(body.Child("Assignment"), gp, force)
		}
		ip.withholdConnectLike(body.Child("Assignment"))
	case key == 15 && response: // DescribeGroupsResponse
		// Each group says its own protocol type; "" (an empty or dead
		// group) or another type leaves its members' bytes raw.
		for _, g := range arrayElems(body.Child("Groups")) {
			gp, force, ok := groupProtocolOf(g.Child("ProtocolType"))
			for _, m := range arrayElems(g.Child("Members")) {
				if ok && force {
					ip.embedMetadata(m.Child("MemberMetadata"), gp, true)
					ip.embedStruct(m.Child("MemberAssignment"), gp.assignment, true)
				}
				ip.withholdConnectLike(m.Child("MemberMetadata"))
				ip.withholdConnectLike(m.Child("MemberAssignment"))
			}
		}
	case key == 58 && !response && !nested: // EnvelopeRequest
		ip.embedRequest(body.Child("RequestData"))
		ip.embedStruct(body.Child("RequestPrincipal"), "DefaultPrincipalData", true)
	}
}

// withholdConnectLike withholds n, a group member's metadata or assignment
// left raw (the message did not say the group's protocol type and the
// bytes decode completely as no struct, or it named another type), when
// its bytes begin as a Kafka Connect struct whose URL
// (ConnectProtocolMetadata Url, ConnectProtocolAssignment LeaderUrl) holds
// an '@' or a parameter named like a secret: a JoinGroupResponse v0-v6 or
// SyncGroup v0-v4 of a Connect group, whose worker sent a version or
// fields kwire's schemas lack, would otherwise show the URL's userinfo in
// the raw forms (-x, -V, the JSON base64).
func (ip *interp) withholdConnectLike(n *Node) {
	if n == nil || n.Kind != KindBytes || n.Flags&(FlagNull|FlagRedacted) != 0 || len(n.Children) > 0 || ip.d.ShowSecrets {
		return
	}
	if connectLikeURLSecret(n.Raw) {
		ip.withhold(n, "the bytes begin as a Kafka Connect struct whose URL may hold a credential")
	}
}

// connectLikeURLSecret reports whether b, after an INT16 version, begins
// with an INT16-length string (ConnectProtocolMetadata Url) or an INT16
// and two such strings (ConnectProtocolAssignment Error, Leader,
// LeaderUrl) one of which holds an '@' or a parameter named like a secret
// (configURLSecret). A string whose length runs past b (a blob cut short)
// counts when it holds "://": its userinfo may be cut before the '@'.
func connectLikeURLSecret(b []byte) bool {
	str := func(off int) (string, int, bool) {
		if off+2 > len(b) {
			return "", 0, false
		}
		l := int(int16(binary.BigEndian.Uint16(b[off:])))
		if l < 0 {
			return "", off + 2, true // null
		}
		end := off + 2 + l
		if end > len(b) {
			// Cut short: a URL's userinfo may be cut before its '@'.
			s := string(b[off+2:])
			if strings.Contains(s, "://") {
				s += "@"
			}
			return s, len(b), true
		}
		return string(b[off+2 : end]), end, true
	}
	secret := func(s string) bool { return strings.IndexByte(s, '@') >= 0 || configURLSecret(s) }
	if len(b) < 4 || int16(binary.BigEndian.Uint16(b)) < 0 {
		return false
	}
	if url, _, ok := str(2); ok && secret(url) {
		return true // metadata: Version, Url
	}
	if _, next, ok := str(4); ok { // assignment: Version, Error, Leader, LeaderUrl
		if lurl, _, ok := str(next); ok && secret(lurl) {
			return true
		}
	}
	return false
}

// groupProtocol names the data structs a classic group's protocol type
// embeds in its members' metadata and assignments.
type groupProtocol struct {
	metadata, assignment string
}

var (
	consumerGroupProtocol = groupProtocol{"ConsumerProtocolSubscription", "ConsumerProtocolAssignment"}
	connectGroupProtocol  = groupProtocol{"ConnectProtocolMetadata", "ConnectProtocolAssignment"}
)

// groupProtocolOf reads a ProtocolType node: "consumer" and "connect"
// give their structs with force set; an absent or null ProtocolType gives
// the consumer's, force unset (decoded if the bytes fit); another
// protocol type gives ok false.
func groupProtocolOf(pt *Node) (gp groupProtocol, force, ok bool) {
	if pt == nil || pt.Kind != KindString || pt.Flags&FlagNull != 0 {
		return consumerGroupProtocol, false, true
	}
	switch pt.Str {
	case consumerProtocolType:
		return consumerGroupProtocol, true, true
	case connectProtocolType:
		return connectGroupProtocol, true, true
	}
	return groupProtocol{}, false, false
}

// embedMetadata decodes n, a member's protocol metadata, as gp's metadata
// struct; a Connect worker's metadata (v1+) holds its current assignment
// in Allocation, decoded in turn.
// When the message does not state the protocol type (force unset), the
// Connect struct is tried after the consumer's, each only if the bytes
// decode completely: a worker's URL, which may hold a userinfo, is then
// withheld as when the type is stated.
func (ip *interp) embedMetadata(n *Node, gp groupProtocol, force bool) {
	if ip.embedStruct(n, gp.metadata, force) {
		ip.embedAllocation(n, gp.metadata)
		return
	}
	if !force && ip.embedStruct(n, connectGroupProtocol.metadata, false) {
		ip.embedAllocation(n, connectGroupProtocol.metadata)
	}
}

// embedAssignment decodes n, a member's assignment, as gp's assignment
// struct, or, when the message does not state the protocol type, as the
// consumer's or else Connect's if the bytes decode completely as one.
func (ip *interp) embedAssignment(n *Node, gp groupProtocol, force bool) {
	if !ip.embedStruct(n, gp.assignment, force) && !force {
		ip.embedStruct(n, connectGroupProtocol.assignment, false)
	}
}

// embedAllocation decodes the Allocation of n, a decoded
// ConnectProtocolMetadata (struct name), as the ConnectProtocolAssignment
// it holds; a URL withheld there marks n FlagRedacted.
func (ip *interp) embedAllocation(n *Node, name string) {
	if name != connectGroupProtocol.metadata {
		return
	}
	if ip.embedStruct(n.Child("Allocation"), connectGroupProtocol.assignment, true) && holdsRedacted(n, 0) {
		n.Flags |= FlagRedacted // the allocation's LeaderUrl was withheld
	}
}

// arrayElems returns the elements of an array node, or nil.
func arrayElems(a *Node) []*Node {
	if a == nil || a.Kind != KindArray {
		return nil
	}
	return a.Children
}

// subDecoder returns a copy of ip's decoder options whose node cap is what
// is left of ip's tree's, and false when nothing is left.
func (ip *interp) subDecoder() (*Decoder, bool) {
	left := ip.d.maxNodes() - ip.t.nodes
	if left < 2 {
		return nil, false
	}
	d := *ip.d
	d.MaxNodes = left
	if m := &ip.t.mem; m.limit > 0 {
		// What is left of the tree's memory; the sub-tree's reservations
		// move to it when grafted (graft).
		if d.MaxMemory = m.limit - m.reserved; d.MaxMemory <= 0 || m.denied {
			return nil, false
		}
	}
	return &d, true
}

// embedStruct decodes n, a BYTES node holding an int16 version followed by
// version of the data struct name, into n's children, and reports whether
// it did. With force unset it does so only when the bytes decode
// completely; with force set a failure is explained in n's Note, and the
// bytes of a struct that can hold a secret (a Connect worker's URL) are
// withheld, as kwire cannot tell where the secret is in them. A value the
// struct's fields withhold marks n FlagRedacted: its raw forms (-x, the
// JSON base64) show the value's span as withheld.
func (ip *interp) embedStruct(n *Node, name string, force bool) bool {
	if n == nil || n.Kind != KindBytes || n.Flags&(FlagNull|FlagRedacted) != 0 || len(n.Raw) == 0 || len(n.Children) > 0 {
		return false
	}
	if len(n.Raw) < 2 {
		if force {
			n.Note = fmt.Sprintf("not a %s: %d byte, want a 2-byte version first", name, len(n.Raw))
			ip.withholdEmbedded(n, name)
		}
		return false
	}
	ver := int16(binary.BigEndian.Uint16(n.Raw))
	if LookupName(name, ver) == nil {
		if force {
			n.Note = fmt.Sprintf("%s version %d is not in the schema table; left raw", name, ver)
			ip.withholdEmbedded(n, name)
		}
		return false
	}
	d, ok := ip.subDecoder()
	if !ok {
		return false
	}
	st := d.DecodeStruct(name, ver, n.Raw[2:])
	if st.Err != nil {
		if force {
			n.Note = fmt.Sprintf("%s v%d not decoded: %v", name, ver, st.Err)
			ip.withholdEmbedded(n, name)
		}
		st.Release() // nothing refers to it: its memory goes back
		return false
	}
	base := n.End() - len(n.Raw)
	v := ip.newNode()
	v.Name, v.Type, v.Kind, v.Space, v.Off, v.Len, v.Int = "Version", "int16", KindInt, n.Space, base, 2, int64(ver)
	v.Field = EmbeddedVersion
	n.Type = name
	n.Ver = ver
	n.Note = name + " " + versionNote(ver)
	n.Children = append(ip.children(1+len(st.Root.Children)), v)
	ip.graft(n, st, n.Space, base+2)
	if holdsRedacted(n, 0) {
		n.Flags |= FlagRedacted
	}
	return true
}

// withholdEmbedded withholds the bytes of n, which did not decode as the
// struct name, when some version of name has a field that holds a secret.
func (ip *interp) withholdEmbedded(n *Node, name string) {
	if n.Flags&FlagRedacted != 0 {
		return
	}
	initSecrets()
	for _, m := range byName()[name] {
		if m.secretVers != nil {
			ip.withhold(n, "the bytes of a "+name+" may hold a credential (a URL's userinfo)")
			return
		}
	}
}

// embedRequest decodes n, an EnvelopeRequest RequestData node, as a request
// header and body (a request frame without its length prefix).
func (ip *interp) embedRequest(n *Node) {
	if n == nil || n.Kind != KindBytes || n.Flags&FlagNull != 0 || len(n.Raw) == 0 || len(n.Children) > 0 {
		return
	}
	d, ok := ip.subDecoder()
	if !ok {
		return
	}
	st := d.decodePayload(n.Raw)
	if st.Err != nil {
		n.Note = "inner request not decoded: " + st.Err.Error()
		st.Release()
		return
	}
	n.Type = "request"
	n.Note = st.Root.Note
	n.Children = ip.children(len(st.Root.Children))
	ip.graft(n, st, n.Space, n.End()-len(n.Raw))
	// Withheld while opaque (secrets.go); decoded, it is a value with
	// parts, withheld as a whole only when a part is.
	if !holdsRedacted(st.Root, 0) {
		n.Flags &^= FlagRedacted
	}
}

// holdsRedacted reports whether a node under n is marked FlagRedacted.
func holdsRedacted(n *Node, depth int) bool {
	if depth > 4*maxDepth {
		return true
	}
	for _, c := range n.Children {
		if c.Flags&FlagRedacted != 0 || holdsRedacted(c, depth+1) {
			return true
		}
	}
	return false
}

// graft appends the children of st's root to n, moving space 0 of st to
// offset delta of space and st's other spaces (decompressed batches) to
// new spaces of ip's tree.
func (ip *interp) graft(n *Node, st *Tree, space, delta int) {
	shift := len(ip.t.Spaces) - 1
	ip.t.Spaces = append(ip.t.Spaces, st.Spaces[1:]...)
	ip.t.nodes += st.nodes
	ip.t.Limits |= st.Limits
	ip.t.mem.absorb(&st.mem)
	for _, c := range st.Root.Children {
		respace(c, space, delta, shift, 0)
		n.Children = append(n.Children, c)
	}
}

// respace moves a node of a sub-tree into its parent tree: space 0 becomes
// offset delta of space, space k > 0 becomes space k+shift.
func respace(n *Node, space, delta, shift, depth int) {
	if depth > 4*maxDepth+64 {
		return
	}
	if n.Space == 0 {
		n.Space = space
		n.Off += delta
	} else {
		n.Space += shift
	}
	for _, c := range n.Children {
		respace(c, space, delta, shift, depth+1)
	}
}

// decodePayload decodes b as a request header and body with no length
// prefix, as EnvelopeRequest RequestData carries them. Root is a KindStruct
// "RequestData" node (Note "CreateTopics v7") whose children are the header
// and the body, as in DecodeRequest.
func (d *Decoder) decodePayload(b []byte) *Tree {
	var ip interp
	ip.reset(d, b, "envelope request")
	root := ip.newNode()
	root.Kind, root.Type, root.Name, root.Off, root.Len = KindStruct, "request", "RequestData", 0, len(b)
	ip.t.Root = root
	ip.msgName = root.Name
	if len(b) < 4 {
		ip.t.Err = &DecodeError{Off: 0, Path: root.Name, Err: fmt.Errorf("%w: %d bytes, want a request header", ErrShort, len(b))}
		return ip.tree()
	}
	key := int16(binary.BigEndian.Uint16(b))
	version := int16(binary.BigEndian.Uint16(b[2:]))
	root.Note = APIName(key) + " " + versionNote(version)
	hv := RequestHeaderVersion(key, version)
	hs := LookupName("RequestHeader", hv)
	if hs == nil {
		ip.t.Err = &DecodeError{Off: 0, Path: root.Name, Err: fmt.Errorf("%w: no RequestHeader v%d in the schema table", ErrUnknownVers, hv)}
		return ip.tree()
	}
	hn := ip.newNode()
	ip.message(hs, hv, hn, len(b), false)
	root.Children = append(root.Children, hn)
	if ip.err == nil {
		bn := ip.newNode()
		ip.body(bn, key, version, false, len(b))
		root.Children = append(root.Children, bn)
		ip.embedded(bn, key, version, false, true)
	}
	ip.t.Err = ip.err
	return ip.tree()
}

// versionPrefixed are the data structs Kafka serializes after an INT16
// version of their own (embedStruct): ConsumerProtocolSubscription and
// ConsumerProtocolAssignment (the consumer group protocol's
// ConsumerProtocol.java serializers), ConnectProtocolMetadata and
// ConnectProtocolAssignment (Kafka Connect's ConnectProtocol.java and
// IncrementalCooperativeConnectProtocol.java) and DefaultPrincipalData
// (DefaultKafkaPrincipalBuilder, KIP-590).
var versionPrefixed = map[string]bool{
	"ConsumerProtocolSubscription": true,
	"ConsumerProtocolAssignment":   true,
	"ConnectProtocolMetadata":      true,
	"ConnectProtocolAssignment":    true,
	"DefaultPrincipalData":         true,
}

// VersionPrefixed reports whether the named struct travels with a leading
// INT16 version, as -V and -x show it where it is embedded.
func VersionPrefixed(name string) bool { return versionPrefixed[name] }

// DecodeVersioned decodes b as a version-prefixed struct (VersionPrefixed)
// as Kafka serializes it: its INT16 version, then the struct at that
// version. The root is the struct (Note "v3") spanning all of b, its first
// child the "Version" node, as where the struct is embedded. A version the
// schema does not know gives ErrUnknownVers, the rest raw.
func (d *Decoder) DecodeVersioned(name string, b []byte) *Tree {
	var ip interp
	ip.reset(d, b, "struct")
	root := ip.newNode()
	ip.t.Root = root
	root.Name, root.Kind, root.Len = name, KindStruct, len(b)
	r := &ip.r
	ver := r.Int16()
	if r.err != nil {
		ip.msgName = name
		ip.capture()
		ip.undecoded(root, 0, len(b))
		ip.t.Err = ip.err
		return ip.tree()
	}
	v := ip.newNode()
	v.Name, v.Type, v.Kind, v.Off, v.Len, v.Int = "Version", "int16", KindInt, 0, 2, int64(ver)
	m := LookupName(name, ver)
	if m == nil {
		root.Children = append(root.Children, v)
		ip.bodyUnknown(root, name, unknownVersion(-1, name, ver, fmt.Sprintf("%v: version %d of %s", ErrUnknownVers, ver, name)), 2, len(b))
		root.Kind, root.Raw = KindStruct, nil
		ip.t.Err = ip.err
		return ip.tree()
	}
	root.Children = append(ip.children(1+len(m.Fields)), v)
	ip.message(m, ver, root, len(b), true)
	root.Off, root.Len = 0, len(b)
	if ip.err == nil {
		ip.embedAllocation(root, name)
	}
	ip.t.Err = ip.err
	return ip.tree()
}
