package protocol

import (
	"encoding/binary"
	"encoding/json"
	"testing"
)

// benchProduceBody is a Produce v3 body with one partition holding a
// gzip batch of benchRecords.
func benchProduceBody(tb testing.TB) []byte {
	batch := recBuild(tb, CodecGzip, 0, 1700000000000, benchRecords())
	body := mustHex("ffff" + "0001" + "00007530" + "00000001" + "000174" + "00000001" + "00000000")
	body = binary.BigEndian.AppendUint32(body, uint32(len(batch)))
	return append(body, batch...)
}

// BenchmarkBodyJSON builds the JsonConverter value of a Produce body
// whose records are decoded; Lazy leaves their base64 to whoever needs it.
func BenchmarkBodyJSON(b *testing.B) {
	body := benchProduceBody(b)
	d := Decoder{Records: true}
	tr := d.DecodeBody(0, 3, false, body)
	if tr.Err != nil {
		b.Fatal(tr.Err)
	}
	for name, f := range map[string]func(*Node) any{"BodyJSON": BodyJSON, "Lazy": BodyJSONLazyRecords} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if f(tr.Root) == nil {
					b.Fatal("nil")
				}
			}
		})
	}
}

// BodyJSONLazyRecords marshals to what BodyJSON does.
func TestBodyJSONLazyRecords(t *testing.T) {
	body := benchProduceBody(t)
	d := Decoder{Records: true}
	tr := d.DecodeBody(0, 3, false, body)
	if tr.Err != nil {
		t.Fatal(tr.Err)
	}
	want, err := json.Marshal(BodyJSON(tr.Root))
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(BodyJSONLazyRecords(tr.Root))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("lazy:\n%s\nwant:\n%s", got, want)
	}
	if lazy := BodyJSONLazyRecords(tr.Root).(Object); len(lazy) == 0 {
		t.Fatal("empty object")
	}
}
