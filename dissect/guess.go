package dissect

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/kwire/kwire/protocol"
)

// Guessing what an orphan answers. A response carries no API key: an
// orphan (its request was not captured) is tried against every response
// schema of the table (protocol.Prober), and the (API key, version) pairs
// that decode its whole frame are its candidates:
//
//   - exactly one: that is what it answers, whatever the API; the frame is
//     decoded as it, and the exchange says it is a guess (Exchange.Guess,
//     a note, and every output mode marks it);
//   - several: their number, and the likeliest, best first: the API and
//     version requested on the connection, then other versions of APIs
//     requested on it, then the rest, each API's versions as a range;
//   - none: no guess.
//
// Trying every schema costs about 0.2 ms of CPU per frame (measured by
// BenchmarkGuessOrphans); so that a capture of a hundred thousand orphans
// (a capture of one direction of the traffic) takes seconds, not minutes,
// the first guessFull orphans of a capture, up to guessMaxFrame bytes
// each and guessFullBytes in all, are tried against every schema, and the
// later or larger ones only against what earlier orphans on their
// connection were found to answer, saying so. The cost grows with the
// frame's bytes times the schemas that read far into it: a 960 KB orphan
// of "0000ffff00000000" repeated, which most schemas read to its end,
// took 5 s of CPU, so a capture of such orphans took 5 s a megabyte
// (1024 of them 85 minutes) before guessFullBytes bounded the bytes tried.

// Bounds of guessing (see above).
const (
	guessFull      = 1024
	guessMaxFrame  = 1 << 20
	guessFullBytes = 4 << 20 // bytes of orphans tried in full, in all
	guessKept      = 8       // guesses remembered per connection
)

// Guess is what an orphan response probably answers.
type Guess struct {
	// APIKey and APIVersion are the guess: when Candidates is 1 the only
	// API and version whose response schema decodes the whole frame,
	// else the likeliest of them.
	APIKey, APIVersion int16
	// Candidates is how many (API key, version) pairs decode the whole
	// frame.
	Candidates int
	// Decoded says the response was decoded as APIKey and APIVersion (the
	// guess was unique): its tree, subject and JSON body are the guess's.
	Decoded bool
	// Partial says not every schema was tried: only what earlier orphans
	// on the connection answered (guessFull, guessMaxFrame).
	Partial bool
	// Likeliest are the likeliest candidates, best first, each an API and
	// a range of its versions (at most three).
	Likeliest []APIRange
	// OneAPI says every candidate is a version of APIKey.
	OneAPI bool
}

// requested notes that version ver of API key key was requested on c.
func (c *conn) requested(key, ver int16) {
	for i := range c.used {
		if c.used[i].Key == key {
			c.used[i].Version = ver
			return
		}
	}
	if len(c.used) < lenientMaxKey {
		c.used = append(c.used, protocol.APIVersion{Key: key, Version: ver})
	}
}

// usedVersion returns the latest version of API key key requested on c.
func (c *conn) usedVersion(key int16) (ver int16, ok bool) {
	for _, u := range c.used {
		if u.Key == key {
			return u.Version, true
		}
	}
	return 0, false
}

// guess tries the orphan response fb and returns the guess and the note
// that words it, a nil Guess and "" when nothing fits.
func (d *Dissector) guess(c *conn, fb []byte) (g *Guess, note string) {
	var cands []protocol.APIVersion
	partial := d.guesses >= guessFull || len(fb) > guessMaxFrame || d.guessedBytes+int64(len(fb)) > guessFullBytes
	if partial {
		for _, g := range c.guessed {
			if d.prober.Fits(fb, g.Key, g.Version) {
				cands = append(cands, g)
			}
		}
	} else {
		d.guesses++
		d.guessedBytes += int64(len(fb))
		cands = d.prober.Candidates(fb)
	}
	if len(cands) == 0 {
		return nil, ""
	}
	// Best first: the version used on the connection, other versions of
	// keys used on it, the rest; then by key and version.
	score := func(a protocol.APIVersion) int {
		switch v, ok := c.usedVersion(a.Key); {
		case ok && v == a.Version:
			return 2
		case ok:
			return 1
		}
		return 0
	}
	slices.SortStableFunc(cands, func(a, b protocol.APIVersion) int {
		return cmp.Or(cmp.Compare(score(b), score(a)), cmp.Compare(a.Key, b.Key), cmp.Compare(a.Version, b.Version))
	})
	g = &Guess{APIKey: cands[0].Key, APIVersion: cands[0].Version, Candidates: len(cands), Partial: partial, Likeliest: ranges(cands, 3),
		OneAPI: !slices.ContainsFunc(cands, func(a protocol.APIVersion) bool { return a.Key != cands[0].Key })}
	if len(cands) == 1 {
		g.Decoded = true
		if !partial && !slices.Contains(c.guessed, cands[0]) {
			if len(c.guessed) == guessKept {
				c.guessed = c.guessed[1:]
			}
			c.guessed = append(c.guessed, cands[0])
		}
	}
	return g, g.note(c)
}

// ranges groups sorted candidates into at most n API version ranges,
// consecutive versions of one key together.
func ranges(cands []protocol.APIVersion, n int) []APIRange {
	var out []APIRange
	for _, a := range cands {
		if k := len(out) - 1; k >= 0 && out[k].Key == a.Key && out[k].Max+1 == a.Version {
			out[k].Max = a.Version
			continue
		}
		if len(out) == n {
			break
		}
		out = append(out, APIRange{Key: a.Key, Min: a.Version, Max: a.Version})
	}
	return out
}

// note words g for the exchange's notes.
func (g *Guess) note(c *conn) string {
	name := func(r APIRange) string {
		s := protocol.APIName(r.Key) + " v" + fmt.Sprint(r.Min)
		if r.Max != r.Min {
			s += "-v" + fmt.Sprint(r.Max)
		}
		if v, ok := c.usedVersion(r.Key); ok {
			if v >= r.Min && v <= r.Max {
				s += fmt.Sprintf(" (v%d requested on this connection)", v)
			} else {
				s += " (requested on this connection)"
			}
		}
		return s
	}
	switch {
	case g.Partial && g.Candidates == 1:
		return fmt.Sprintf("probably %s v%d, which earlier orphans on this connection answered; decoded as it (a guess; beyond the first %d orphans or %s of them, or above %s, not every API is tried)",
			protocol.APIName(g.APIKey), g.APIVersion, guessFull, protocol.FormatSize(guessFullBytes), protocol.FormatSize(guessMaxFrame))
	case g.Partial:
		return fmt.Sprintf("one of %d APIs earlier orphans on this connection answered: %s", g.Candidates, joinRanges(g.Likeliest, name))
	case g.Candidates == 1:
		return fmt.Sprintf("probably %s v%d: the only API and version whose response decodes the whole frame; decoded as it (a guess)",
			protocol.APIName(g.APIKey), g.APIVersion)
	case g.OneAPI:
		return fmt.Sprintf("probably %s: the only API whose response decodes the whole frame (%d of its versions do); not decoded",
			joinRanges(g.Likeliest, name), g.Candidates)
	}
	return fmt.Sprintf("one of %d API versions whose response decodes the whole frame, likeliest %s; not decoded", g.Candidates, joinRanges(g.Likeliest, name))
}

func joinRanges(rs []APIRange, name func(APIRange) string) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = name(r)
	}
	return strings.Join(s, ", ")
}
