package stats

import (
	"testing"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/protocol"
	"github.com/kwire/kwire/reassembly"
)

// A frame whose record batch could not be decoded counts as a decode
// failure of its connection, though Tree.Err stays nil.
func TestCollectorCountsRecordErrors(t *testing.T) {
	b, _ := batch(1, "v", true)
	b[len(b)-3] ^= 0xff // inside the gzip stream
	tr := (&protocol.Decoder{Records: true}).DecodeRecordBatches(b)
	if tr.Err != nil || tr.FirstError() == nil {
		t.Fatalf("want a record-level error only: Err %v", tr.Err)
	}
	c := &reassembly.Conn{Index: 0, A: ap("10.0.0.1:50000"), B: ap("10.0.0.9:9092")}
	col := NewCollector(Options{})
	col.Exchange(xchg(c, "x", &dissect.Frame{Tree: tr, Bytes: b}, nil, 0, 3, 1, 1, 0, 0))
	if r := col.Report(); len(r.Connections) != 1 || r.Connections[0].DecodeFailures != 1 {
		t.Errorf("connections %+v", r.Connections)
	}
}
