package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// byteSize is a flag value of a size in bytes, written as a whole number
// with an optional unit: B, KiB, MiB, GiB (powers of 1024; K, M, G and
// KB, MB, GB mean the same), e.g. 16MiB, 512KiB, 1048576.
type byteSize int64

func (b byteSize) String() string {
	n := int64(b)
	for _, u := range []struct {
		name  string
		shift uint
	}{{"GiB", 30}, {"MiB", 20}, {"KiB", 10}} {
		if n != 0 && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10)
}

func (b *byteSize) Set(s string) error {
	num := strings.TrimRightFunc(s, unicode.IsLetter)
	unit := strings.ToLower(strings.TrimSpace(s[len(num):]))
	num = strings.TrimSpace(num)
	var shift uint
	switch unit {
	case "", "b":
	case "k", "kb", "kib":
		shift = 10
	case "m", "mb", "mib":
		shift = 20
	case "g", "gb", "gib":
		shift = 30
	default:
		return fmt.Errorf("unknown unit %q (use B, K/KB/KiB, M/MB/MiB or G/GB/GiB, all powers of 1024)", s[len(num):])
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("%q is not a size: a whole number of bytes with an optional unit, e.g. 16MiB", s)
	}
	if n > math.MaxInt64>>shift {
		return fmt.Errorf("%q is too large", s)
	}
	*b = byteSize(n << shift)
	return nil
}

func (b *byteSize) Type() string { return "size" }
