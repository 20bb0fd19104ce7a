package tlsdec

import (
	"crypto/sha256"
	"sync"
)

// Sessions remembers the master secrets of the TLS 1.2 connections
// decrypted so far by session ID and session ticket, so that a later
// connection resuming one of them (an abbreviated handshake, RFC 5246
// section 7.3; RFC 5077) is decrypted too: clients such as Go's log no
// key for a resumed session. It is shared by the Conns of one capture
// (Options.Sessions) and safe for use by several goroutines. Memory is
// bounded: at most maxSessions entries of 80 bytes, the oldest forgotten
// first.
type Sessions struct {
	mu    sync.Mutex
	m     map[[32]byte][]byte
	order [][32]byte
}

// maxSessions bounds the entries of a Sessions: about 330 KB.
const maxSessions = 4096

// sessionKey names a session ID or ticket: its SHA-256, with a prefix
// byte so that an ID and a ticket never collide.
func sessionKey(kind byte, b []byte) [32]byte {
	h := sha256.New()
	h.Write([]byte{kind})
	h.Write(b)
	return [32]byte(h.Sum(nil))
}

func (s *Sessions) add(k [32]byte, master []byte) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = make(map[[32]byte][]byte)
	}
	if _, ok := s.m[k]; !ok {
		if len(s.order) >= maxSessions {
			delete(s.m, s.order[0])
			s.order = s.order[1:]
		}
		s.order = append(s.order, k)
	}
	s.m[k] = master
}

func (s *Sessions) get(k [32]byte) []byte {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[k]
}
