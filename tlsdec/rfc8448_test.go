package tlsdec

import (
	"bytes"
	"encoding/hex"
	"testing"
)

// RFC 8448 section 3 ("Simple 1-RTT Handshake"), TLS_AES_128_GCM_SHA256:
// traffic secrets, the keys and IVs derived from them, and records
// encrypted with them, as the RFC prints them.
var rfc8448 = struct {
	serverHS, clientHS, clientApp, serverApp string
	serverHSKey, serverHSIV                  string
	clientHSIV                               string
	clientAppKey, clientAppIV                string
	clientFinished                           string // record under the client handshake keys, sequence 0
	clientData                               string // 50 bytes 00..31, client application keys, sequence 0
	clientAlert                              string // close_notify, sequence 1
	serverData                               string // 50 bytes 00..31, server application keys, sequence 1
}{
	serverHS:       "b67b7d690cc16c4e75e54213cb2d37b4e9c912bcded9105d42befd59d391ad38",
	clientHS:       "b3eddb126e067f35a780b3abf45e2d8f3b1a950738f52e9600746a0e27a55a21",
	clientApp:      "9e40646ce79a7f9dc05af8889bce6552875afa0b06df0087f792ebb7c17504a5",
	serverApp:      "a11af9f05531f856ad47116b45a950328204b4f44bfb6b3a4b4f1f3fcb631643",
	serverHSKey:    "3fce516009c21727d0f2e4e86ee403bc",
	serverHSIV:     "5d313eb2671276ee13000b30",
	clientHSIV:     "5bd3c71b836e0b76bb73265f",
	clientAppKey:   "17422dda596ed5d9acd890e3c63f5051",
	clientAppIV:    "5b78923dee08579033e523d9",
	clientFinished: "170303003575ec4dc238cce60b298044a71e219c56cc77b0517fe9b93c7a4bfc44d87f38f80338ac98fc46deb384bd1caeacab6867d726c40546",
	clientData:     "1703030043a23f7054b62c94d0affafe8228ba55cbefacea42f914aa66bcab3f2b9819a8a5b46b395bd54a9a20441e2b62974e1f5a6292a2977014bd1e3deae63aeebb21694915e4",
	clientAlert:    "1703030013c9872760655666b74d7ff1153efd6db6d0b0e3",
	serverData:     "17030300432e937e11ef4ac740e538ad36005fc4a46932fc3225d05f82aa1b36e30efaf97d90e6dffc602dcb501a59a8fcc49c4bf2e5f0a21c0047c2abf332540dd032e167c2955d",
}

func TestRFC8448KeySchedule(t *testing.T) {
	s := suiteByID(0x1301)
	for _, c := range []struct{ name, secret, key, iv string }{
		{"server handshake", rfc8448.serverHS, rfc8448.serverHSKey, rfc8448.serverHSIV},
		{"client application", rfc8448.clientApp, rfc8448.clientAppKey, rfc8448.clientAppIV},
	} {
		key, iv := trafficKeys13(s, mustHex(c.secret))
		if hex.EncodeToString(key) != c.key || hex.EncodeToString(iv) != c.iv {
			t.Errorf("%s: key %x iv %x, want %s %s", c.name, key, iv, c.key, c.iv)
		}
	}
	if _, iv := trafficKeys13(s, mustHex(rfc8448.clientHS)); hex.EncodeToString(iv) != rfc8448.clientHSIV {
		t.Errorf("client handshake iv %x, want %s", iv, rfc8448.clientHSIV)
	}
}

// open13 opens one RFC 8448 record under secret at sequence number seq.
func open13(t *testing.T, secret, record string, seq uint64) ([]byte, byte) {
	t.Helper()
	s := suiteByID(0x1301)
	key, iv := trafficKeys13(s, mustHex(secret))
	p, err := newProtection(s, true, key, iv, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	p.seq = seq
	rec := mustHex(record)
	pt, typ, err := p.open(nil, [5]byte(rec[:5]), rec[5:])
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return pt, typ
}

func TestRFC8448Records(t *testing.T) {
	payload := make([]byte, 50)
	for i := range payload {
		payload[i] = byte(i)
	}
	pt, typ := open13(t, rfc8448.clientHS, rfc8448.clientFinished, 0)
	if typ != ctHandshake || len(pt) != 36 || pt[0] != hsFinished || pt[3] != 32 {
		t.Errorf("client Finished: type %d, % x", typ, pt)
	}
	if pt, typ = open13(t, rfc8448.clientApp, rfc8448.clientData, 0); typ != ctApplicationData || !bytes.Equal(pt, payload) {
		t.Errorf("client data: type %d, % x", typ, pt)
	}
	if pt, typ = open13(t, rfc8448.clientApp, rfc8448.clientAlert, 1); typ != ctAlert || !bytes.Equal(pt, []byte{1, 0}) {
		t.Errorf("client alert: type %d, % x", typ, pt)
	}
	if pt, typ = open13(t, rfc8448.serverApp, rfc8448.serverData, 1); typ != ctApplicationData || !bytes.Equal(pt, payload) {
		t.Errorf("server data: type %d, % x", typ, pt)
	}
	// The wrong sequence number does not authenticate.
	s := suiteByID(0x1301)
	key, iv := trafficKeys13(s, mustHex(rfc8448.clientApp))
	p, _ := newProtection(s, true, key, iv, nil, false)
	rec := mustHex(rfc8448.clientAlert)
	if _, _, err := p.open(nil, [5]byte(rec[:5]), rec[5:]); err != errAuth {
		t.Errorf("sequence 0 for a sequence 1 record: %v, want errAuth", err)
	}
}

func TestCCM(t *testing.T) {
	// Vectors computed with an independent AES-CCM (Python's
	// cryptography package, AESCCM), 12-byte nonces as TLS uses.
	key := make([]byte, 32)
	nonce := make([]byte, 12)
	ad := make([]byte, 13)
	pt := make([]byte, 40)
	for i := range key {
		key[i] = byte(i)
	}
	for i := range nonce {
		nonce[i] = byte(0x10 + i)
	}
	for i := range ad {
		ad[i] = byte(0x20 + i)
	}
	for i := range pt {
		pt[i] = byte(i * 7)
	}
	for _, c := range []struct {
		keyLen, tag int
		pt, ad      []byte
		want        string
	}{
		{16, 16, pt, ad, "23b2b7b55ed707833293398d203fb9ef0bc0ac32b9d4908a5e4711ed17eebf5dbdf4429f1f9f35a283aefd8156a19f9524ae61b1230f6203"},
		{16, 8, pt, ad, "23b2b7b55ed707833293398d203fb9ef0bc0ac32b9d4908a5e4711ed17eebf5dbdf4429f1f9f35a2410c4b8225345ae1"},
		{32, 16, pt[:17], nil, "71b7ff167a684a5154ccdb236804d258460a3dd48dadb7c3f848f519b568867e4e"},
	} {
		kind := kindCCM
		if c.tag == 8 {
			kind = kindCCM8
		}
		p, err := newProtection(&suite{kind: kind, keyLen: c.keyLen}, true, key[:c.keyLen], nonce, nil, false)
		if err != nil {
			t.Fatal(err)
		}
		if got := hex.EncodeToString(p.aead.Seal(nil, nonce, c.pt, c.ad)); got != c.want {
			t.Errorf("seal key %d tag %d: %s, want %s", c.keyLen, c.tag, got, c.want)
		}
		out, err := p.aead.Open(nil, nonce, mustHex(c.want), c.ad)
		if err != nil || !bytes.Equal(out, c.pt) {
			t.Errorf("open key %d tag %d: %x %v", c.keyLen, c.tag, out, err)
		}
		bad := mustHex(c.want)
		bad[3] ^= 1
		if _, err := p.aead.Open(nil, nonce, bad, c.ad); err == nil {
			t.Error("a corrupt CCM message opened")
		}
	}
}
