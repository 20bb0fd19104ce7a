// Package poison is a debugging aid for kwire's recycled memory: with
// Released set, what protocol.Tree.Release and dissect.Exchange.Release
// hand back is overwritten with a recognisable pattern and never reused,
// so that code which still reads a tree's nodes, Children slices, Raw
// bytes or frame bytes after releasing them (a use after release) prints
// the pattern, "RELEASED", instead of stale or another exchange's data,
// and golden tests fail on it.
//
// Released is false in normal builds and true in builds with the
// kwirepoison tag: make test runs the golden tests of cmd/kwire and
// dissect once more with -tags kwirepoison (mk/test.mk). Tests may set it
// themselves around a check (not in parallel with other tests).
package poison

// Released says whether released memory is poisoned instead of pooled.
var Released = tagged

// Byte is what poisoned bytes are filled with.
const Byte = 0xA5

// Marker is the string poisoned nodes carry (Name, Type, Str and Note).
const Marker = "RELEASED"

// Fill overwrites all of b's capacity with Byte.
func Fill(b []byte) {
	b = b[:cap(b)]
	for i := range b {
		b[i] = Byte
	}
}
