package protocol

// decodeRecords decodes the record batches (or legacy message sets) held in
// the RECORDS node n, adding them as n's children. Decompressed bytes are
// appended to t.Spaces. Placeholder until record batch decoding lands: it
// leaves n as a raw span.
func (d *Decoder) decodeRecords(t *Tree, n *Node) {}
