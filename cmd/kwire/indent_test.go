package main

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// indentRef is the byte-at-a-time definition of indentWriter: the prefix
// before the first byte of every line that is not empty.
func indentRef(prefix string, s []byte) []byte {
	var out []byte
	bol := true
	for _, c := range s {
		if bol && c != '\n' {
			out = append(out, prefix...)
		}
		out = append(out, c)
		bol = c == '\n'
	}
	return out
}

func TestIndentWriter(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	alphabet := []byte("ab \n\n")
	for range 2000 {
		in := make([]byte, r.IntN(60))
		for i := range in {
			in[i] = alphabet[r.IntN(len(alphabet))]
		}
		var got bytes.Buffer
		iw := &indentWriter{w: &got, prefix: "    ", bol: true}
		for p := in; len(p) > 0; { // in random pieces
			k := 1 + r.IntN(len(p))
			if n, err := iw.Write(p[:k]); n != k || err != nil {
				t.Fatalf("Write = %d, %v; want %d, nil", n, err, k)
			}
			p = p[k:]
		}
		if want := indentRef("    ", in); !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("%q: got %q, want %q", in, got.Bytes(), want)
		}
	}
}
