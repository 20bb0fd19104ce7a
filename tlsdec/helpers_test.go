package tlsdec

import (
	"crypto/sha256"
	"hash"
)

func sha256New() hash.Hash { return sha256.New() }

func sha256Sum(b []byte) []byte {
	s := sha256.Sum256(b)
	return s[:]
}
