package render

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/facts"
	"github.com/kwire/kwire/protocol"
)

// TestWireWordsQuoted: the values of a line's words that come from the
// wire (the SASL mechanism and user, the group, member, transactional and
// coordinator IDs an error names) are written as they are when they are
// printable words, and quoted otherwise: -V and -x write their lines
// without the terminal-safe net, so a mechanism "E\x1b]52;c;...\a" (an
// OSC 52 clipboard write) must not reach the terminal, and a mechanism
// "PLAIN user=admin" must not pass for two words.
func TestWireWordsQuoted(t *testing.T) {
	hostile := []string{
		"E\x1b]52;c;aGk=\a", "G\x1b[2J\rX", "PLAIN user=admin", "a\u009bb", "evil\u202etxt", "x\xffy", `q"q`,
	}
	check := func(what, got, v string) {
		t.Helper()
		for i, r := range got {
			if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r == 0x202e || r == utf8.RuneError && !strings.HasPrefix(got[i:], "\uFFFD") {
				t.Errorf("%s %q: control %U in %q", what, v, r, got)
			}
		}
		if !strings.Contains(got, `"`) {
			t.Errorf("%s %q: not quoted: %q", what, v, got)
		}
	}
	for _, v := range hostile {
		check("mechanism", string(appendSASL(nil, &dissect.Exchange{Mechanism: v})), v)
		check("user", string(appendSASL(nil, &dissect.Exchange{User: v})), v)
		for _, role := range []protocol.Role{protocol.RoleGroupID, protocol.RoleTransactionalID, protocol.RoleCoordinatorKey, protocol.RoleMemberID, 0} {
			check("scope", string(appendScope(nil, facts.Scope{Role: role, ID: v})), v)
		}
	}
	if got := string(appendSASL(nil, &dissect.Exchange{Mechanism: "SCRAM-SHA-256", User: "alice"})); got != " mechanism=SCRAM-SHA-256 user=alice" {
		t.Errorf("plain words: %q", got)
	}
	if got := string(appendScope(nil, facts.Scope{Role: protocol.RoleGroupID, ID: "orders-consumers"})); got != "group=orders-consumers" {
		t.Errorf("plain group: %q", got)
	}
}

// TestHexMasksWithheldPayload: in -x, a withheld node whose parts lie in
// another space (a compressed payload, its records decoded in their own
// section) has its own bytes masked.
func TestHexMasksWithheldPayload(t *testing.T) {
	secret := []byte("Qz-LITERAL-SECRET")
	tr := &protocol.Tree{Spaces: []protocol.Space{{Name: "frame", Data: secret}, {Name: "inner", Data: []byte("xy")}}}
	inner := &protocol.Node{Name: "[0]", Kind: protocol.KindBytes, Space: 1, Off: 0, Len: 2, Raw: []byte("xy")}
	payload := &protocol.Node{Name: "Records", Kind: protocol.KindArray, Space: 0, Off: 0, Len: len(secret), Flags: protocol.FlagRedacted, Children: []*protocol.Node{inner}}
	tr.Root = &protocol.Node{Name: "root", Kind: protocol.KindStruct, Space: 0, Off: 0, Len: len(secret), Children: []*protocol.Node{payload}}
	var b strings.Builder
	if err := Hex(&b, tr, Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "51 7a 2d 4c") || strings.Contains(b.String(), "LITERAL") {
		t.Errorf("the withheld payload's bytes are shown:\n%s", b.String())
	}
	if !strings.Contains(b.String(), "<redacted>") {
		t.Errorf("no redaction marked:\n%s", b.String())
	}
}
