package render

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/kwire/kwire/protocol"
)

// FuzzRender decodes arbitrary request frames and renders them every way:
// nothing panics, the annotated dump lists every byte of every space
// exactly once, and the JSON is valid.
func FuzzRender(f *testing.F) {
	f.Add(mustHex(f, apiVersionsHex))
	f.Add(produceV9().Spaces[0].Data)
	if testing.Short() {
		return
	}
	for _, v := range loadVectorsIfPresent(f) {
		if v.Direction != "request" || v.APIKey < 0 {
			continue
		}
		// Frame the body: length, header v2 (flexible) or v1, body.
		body := mustHex(f, v.Hex)
		hdr := binary.BigEndian.AppendUint16(nil, uint16(v.APIKey))
		hdr = binary.BigEndian.AppendUint16(hdr, uint16(v.Version))
		hdr = binary.BigEndian.AppendUint32(hdr, 7)
		hdr = append(hdr, 0, 1, 'c')
		frame := binary.BigEndian.AppendUint32(nil, uint32(len(hdr)+len(body)))
		f.Add(append(append(frame, hdr...), body...))
		f.Add(append(append(frame, hdr...), append(body, 0)...))
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		// A small decompression cap: a dump lists every decompressed byte.
		d := protocol.Decoder{Records: true, MaxDecompressed: 1 << 16}
		tr := d.DecodeRequest(frame)
		checkCoverage(t, "fuzz", tr)
		var buf bytes.Buffer
		for _, o := range []Options{{}, {Color: true, Values: ValuesHex, MaxValue: 3}} {
			if err := Tree(&buf, tr, o); err != nil {
				t.Fatal(err)
			}
			buf.Reset()
			if err := TreeJSON(&buf, tr, o); err != nil {
				t.Fatal(err)
			}
			if !jsonValid(buf.Bytes()) {
				t.Fatalf("TreeJSON not valid: %s", buf.Bytes())
			}
			buf.Reset()
		}
	})
}
