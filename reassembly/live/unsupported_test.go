package live

import (
	"errors"
	"strings"
	"testing"
)

// TestUnsupportedError: a build that cannot capture says so, with
// ErrUnsupported (kwire live exits 2 on it) and how to get one that can.
func TestUnsupportedError(t *testing.T) {
	err := unsupportedError("darwin")
	if !errors.Is(err, ErrUnsupported) {
		t.Fatalf("%v does not wrap ErrUnsupported", err)
	}
	for _, want := range []string{"on darwin", "go build -tags pcap ./cmd/kwire", "kwire read"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("no %q in %q", want, err)
		}
	}
}
