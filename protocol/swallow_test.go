package protocol

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// findNamed returns the first node of t, depth first, named name.
func findNamed(n *Node, name string) *Node {
	if n == nil {
		return nil
	}
	if n.Name == name {
		return n
	}
	for _, c := range n.Children {
		if f := findNamed(c, name); f != nil {
			return f
		}
	}
	return nil
}

// swallowing returns first with its length field grown to cover next too:
// the frame a corrupt or hostile length makes of the two.
func swallowing(first, next []byte) []byte {
	b := append(append([]byte(nil), first...), next...)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// TestSwallowedSecretsWithheld: a frame whose length is too large
// swallows the frames after it, which its decode shows as leftover
// bytes. They are withheld when they may hold a later frame's secrets: any
// leftover of SaslHandshake (what follows it is authentication), a
// leftover holding a SaslHandshake or SaslAuthenticate request header
// whatever the frame, the undecoded rest of a SaslAuthenticate response
// whose header failed; other leftovers are shown. --show-secrets shows
// them all.
func TestSwallowedSecretsWithheld(t *testing.T) {
	secret := []byte("\x00alice\x00hunter2-SECRET")
	auth := kmsg.NewPtrSASLAuthenticateRequest()
	auth.Version = 1
	auth.SASLAuthBytes = secret
	authFrame := kmsgRequestFrame(auth, 3)

	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version = 1
	hs.Mechanism = "PLAIN"
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 9
	av := kmsg.NewPtrApiVersionsRequest()
	av.Version = 3
	av.ClientSoftwareName, av.ClientSoftwareVersion = "x", "1"

	for _, c := range []struct {
		name     string
		frame    []byte
		withheld bool
	}{
		{"SaslHandshake swallowing SaslAuthenticate", swallowing(kmsgRequestFrame(hs, 2), authFrame), true},
		{"ApiVersions swallowing SaslHandshake and a raw token", swallowing(kmsgRequestFrame(av, 1), append(kmsgRequestFrame(hs, 2), secret...)), true},
		{"ApiVersions with plain leftover", swallowing(kmsgRequestFrame(av, 1), []byte("trailing")), false},
		{"Metadata swallowing SaslAuthenticate", swallowing(kmsgRequestFrame(md, 9), authFrame), true},
		{"Metadata with plain leftover", swallowing(kmsgRequestFrame(md, 9), []byte("just some trailing bytes")), false},
	} {
		var d Decoder
		tr := d.DecodeRequest(c.frame)
		left := findNamed(tr.Root, nameLeftover)
		if left == nil {
			t.Fatalf("%s: no leftover node", c.name)
		}
		if got := left.Flags&FlagRedacted != 0 && left.Raw == nil; got != c.withheld {
			t.Errorf("%s: withheld %v, want %v (%q)", c.name, got, c.withheld, left.Note)
		}
		shown := Decoder{ShowSecrets: true}
		if l := findNamed(shown.DecodeRequest(c.frame).Root, nameLeftover); l == nil || l.Flags&FlagRedacted != 0 || len(l.Raw) == 0 {
			t.Errorf("%s: --show-secrets does not show the leftover", c.name)
		}
	}

	// A SaslAuthenticate response whose header's tagged fields are
	// broken: the rest, the server's SCRAM signature among it, is withheld.
	resp := kmsg.NewPtrSASLAuthenticateResponse()
	resp.Version = 2
	resp.SASLAuthBytes = []byte("v=SERVERSIGNATURE")
	rf := kmsgResponseFrame(resp, 3)
	rf[8] = 0x7f // the header's tagged-field count: 127, far more than there is
	var d Decoder
	tr := d.DecodeResponse(rf, 36, 2)
	if u := findNamed(tr.Root, nameUndecoded); u == nil || u.Flags&FlagRedacted == 0 || u.Raw != nil {
		t.Errorf("SaslAuthenticate response with a broken header: undecoded %+v", u)
	}
	for _, n := range []*Node{tr.Root} {
		if bytes.Contains(n.Raw, []byte("SERVERSIGNATURE")) {
			t.Error("the signature is in the tree")
		}
	}
}
