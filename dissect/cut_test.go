package dissect

import (
	"strings"
	"testing"

	"github.com/kwire/kwire/reassembly"
)

// A cut (a read -w file's hole) is handled as a gap, the next frame found
// after it, but is no problem: a frame it leaves incomplete (one that
// shared a packet with a frame written) is reported as cut by the
// capture's writer, not as a truncated frame, and the summary counts the
// cut apart from gaps.
func TestCutIsNoProblem(t *testing.T) {
	req := reqFrame(3, 1, 7, []byte{0, 0, 0, 0})
	next := reqFrame(3, 1, 8, []byte{0, 0, 0, 0})
	r := newRig(t, Options{}, true)
	r.client(req, next[:10]) // a request, and the start of one not written
	r.d.Cut(r.c, reassembly.AtoB, int64(len(next)-10), pktTime(r.pkt))
	r.client(reqFrame(3, 1, 9, []byte{0, 0, 0, 0}))
	r.d.Finish()
	s := r.d.Summary()
	if s.Gaps != 0 || s.Truncated != 0 || s.Cuts != 1 || s.CutBytes != int64(len(next)-10) {
		t.Errorf("gaps %d truncated %d cuts %d (%d bytes)", s.Gaps, s.Truncated, s.Cuts, s.CutBytes)
	}
	cuts := r.sink.events(EventCut)
	if len(cuts) != 2 || !strings.Contains(cuts[0].Detail+cuts[1].Detail, "frame cut by the capture's writer") {
		t.Errorf("cut events %+v", cuts)
	}
	if tr := r.sink.events(EventTruncated); len(tr) != 0 {
		t.Errorf("truncated events %+v", tr)
	}
}
