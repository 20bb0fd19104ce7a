package protocol

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestIntern: a string value met before is the string made then, with no
// allocation; a secret's value or a config entry's part is never kept;
// long values are not kept; the table never passes strTableMax values.
func TestIntern(t *testing.T) {
	ip := new(interp)
	plain := &Field{Name: "Name", Kind: TypeString}
	a := ip.intern(plain, []byte("orders"))
	b := ip.intern(plain, []byte("orders"))
	if a != "orders" || unsafe.StringData(a) != unsafe.StringData(b) {
		t.Errorf("the same value twice gave two strings (%q, %q)", a, b)
	}
	buf := []byte("orders")
	if n := testing.AllocsPerRun(100, func() { ip.intern(plain, buf) }); n != 0 {
		t.Errorf("%.1f allocations for a value met before", n)
	}
	for _, f := range []*Field{
		{Name: "Secret", Kind: TypeString, Secret: SecretAlways},
		{Name: "AuthBytes", Kind: TypeString, Secret: SecretSASL},
		{Name: "Value", Kind: TypeString, cfg: cfgValue},
	} {
		s := ip.intern(f, []byte("hunter2"))
		if s != "hunter2" {
			t.Errorf("%s: %q", f.Name, s)
		}
		if _, kept := ip.strs["hunter2"]; kept {
			t.Errorf("%s: the value was kept", f.Name)
		}
	}
	long := make([]byte, strTableLen+1)
	ip.intern(plain, long)
	if _, kept := ip.strs[string(long)]; kept {
		t.Errorf("a value of %d bytes was kept", len(long))
	}
	for i := range 3 * strTableMax {
		if s := ip.intern(plain, fmt.Appendf(nil, "topic-%d", i)); s != fmt.Sprintf("topic-%d", i) {
			t.Fatalf("value %d: %q", i, s)
		}
		if len(ip.strs) > strTableMax {
			t.Fatalf("%d values kept, past %d", len(ip.strs), strTableMax)
		}
	}
}

// TestParseRequestHeaderReusing: the client id given back when the bytes
// are the same, a new string when they are not, nulls still null.
func TestParseRequestHeaderReusing(t *testing.T) {
	r := kmsg.NewPtrMetadataRequest()
	r.Version = 9
	fb := kmsgRequestFrame(r, 7) // kmsgRequestFrame's client id
	h, err := ParseRequestHeader(fb[4:])
	if err != nil || h.ClientID == "" {
		t.Fatalf("%+v %v", h, err)
	}
	prev := string([]byte(h.ClientID)) // a string of its own
	h2, err := ParseRequestHeaderReusing(fb[4:], prev)
	if err != nil || h2 != h || unsafe.StringData(h2.ClientID) != unsafe.StringData(prev) {
		t.Errorf("same bytes: %+v (%v), not the string given", h2, err)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = ParseRequestHeaderReusing(fb[4:], prev) }); n != 0 {
		t.Errorf("%.1f allocations with the same client id", n)
	}
	h3, err := ParseRequestHeaderReusing(fb[4:], "another")
	if err != nil || h3 != h {
		t.Errorf("other client id given: %+v (%v), want %+v", h3, err, h)
	}
	// A null client id (INT16 -1) stays null whatever is given.
	null := append([]byte(nil), fb[4:12]...)
	null = append(null, 0xff, 0xff, 0) // and no tagged fields
	h4, err := ParseRequestHeaderReusing(null, "")
	if err != nil || !h4.ClientIDNull || h4.ClientID != "" {
		t.Errorf("null client id: %+v (%v)", h4, err)
	}
}
