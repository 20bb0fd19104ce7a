package secretcorpus

import (
	"testing"

	"github.com/kwire/kwire/protocol"
)

// Every version of every message, encoded with Encode's defaults, decodes
// whole (no error, no leftover) with protocol's decoder: the corpus's
// frames are what they claim to be.
func TestEncodeDecodes(t *testing.T) {
	n := 0
	for _, m := range protocol.Schemas {
		for v := m.ValidVersions.Min; v <= m.ValidVersions.Max; v++ {
			b := Encode(m, v, nil, Tag{Tag: 1234, Data: []byte("kw")})
			var tr *protocol.Tree
			if m.APIKey >= 0 {
				tr = protocol.DecodeBody(m.APIKey, v, m.Type == protocol.TypeResponse, b)
			} else {
				tr = protocol.DecodeStruct(m.Name, v, b)
			}
			if tr.Err != nil {
				t.Errorf("%s v%d: %v\n%x", m.Name, v, tr.Err, b)
			}
			n++
		}
	}
	if n < 500 {
		t.Errorf("only %d message versions encoded", n)
	}
}

// Build is deterministic, and every case's frames decode.
func TestBuild(t *testing.T) {
	a, b := Build(), Build()
	if len(a.Secrets) != len(b.Secrets) || len(a.Frames) != len(b.Frames) || len(a.Secrets) < 200 {
		t.Fatalf("Build: %d and %d secrets, %d and %d frames", len(a.Secrets), len(b.Secrets), len(a.Frames), len(b.Frames))
	}
	for i := range a.Secrets {
		if string(a.Secrets[i].Value) != string(b.Secrets[i].Value) {
			t.Fatalf("secret %d differs between builds", i)
		}
	}
	for _, s := range a.Secrets {
		if len(s.Value) < 16 {
			t.Errorf("%s: secret of %d bytes: the searches' windows assume 16 at least", s.Case, len(s.Value))
		}
	}
}
