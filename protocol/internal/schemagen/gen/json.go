package gen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// maxVersion mirrors protocol.MaxVersion: the open end of an "N+" range.
const maxVersion = 32767

// vrange is an inclusive version range; Min > Max means empty ("none").
type vrange struct{ Min, Max int }

var noVersions = vrange{0, -1}

func (r vrange) empty() bool         { return r.Min > r.Max }
func (r vrange) contains(v int) bool { return r.Min <= v && v <= r.Max }

// parseVersions parses Kafka's version syntax: "none", "N", "N-M", "N+".
// Numbers are decimal in [0, 32767]; anything else is an error.
func parseVersions(s string) (vrange, error) {
	switch {
	case s == "none":
		return noVersions, nil
	case strings.HasSuffix(s, "+"):
		n, err := parseVersion(strings.TrimSuffix(s, "+"))
		if err != nil {
			return vrange{}, fmt.Errorf("bad version range %q: %w", s, err)
		}
		return vrange{n, maxVersion}, nil
	case strings.Contains(s, "-"):
		lo, hi, _ := strings.Cut(s, "-")
		a, err := parseVersion(lo)
		if err != nil {
			return vrange{}, fmt.Errorf("bad version range %q: %w", s, err)
		}
		b, err := parseVersion(hi)
		if err != nil {
			return vrange{}, fmt.Errorf("bad version range %q: %w", s, err)
		}
		if a > b {
			return vrange{}, fmt.Errorf("bad version range %q: start after end", s)
		}
		return vrange{a, b}, nil
	default:
		n, err := parseVersion(s)
		if err != nil {
			return vrange{}, fmt.Errorf("bad version %q: %w", s, err)
		}
		return vrange{n, n}, nil
	}
}

func parseVersion(s string) (int, error) {
	if s == "" || len(s) > 5 {
		return 0, fmt.Errorf("not a version number")
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("not a version number")
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n > maxVersion {
		return 0, fmt.Errorf("version out of range [0, %d]", maxVersion)
	}
	return n, nil
}

// stripComments removes "//" comments outside JSON strings, keeping line
// breaks so that json's error offsets still point at the right line.
func stripComments(src []byte) []byte {
	out := make([]byte, 0, len(src))
	inString, escaped := false, false
	for i := 0; i < len(src); i++ {
		c := src[i]
		if inString {
			out = append(out, c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		if c == '"' {
			inString = true
			out = append(out, c)
			continue
		}
		if c == '/' && i+1 < len(src) && src[i+1] == '/' {
			for i < len(src) && src[i] != '\n' {
				i++
			}
			if i < len(src) {
				out = append(out, '\n')
			}
			continue
		}
		out = append(out, c)
	}
	return out
}

// jsonMessage is the shape of one message JSON file. Keys kwire does not
// carry (about, listeners, ...) are accepted so that strict decoding can
// reject keys nobody has looked at yet.
type jsonMessage struct {
	APIKey                *int            `json:"apiKey"`
	Type                  string          `json:"type"`
	Name                  string          `json:"name"`
	ValidVersions         *string         `json:"validVersions"`
	FlexibleVersions      *string         `json:"flexibleVersions"`
	DeprecatedVersions    string          `json:"deprecatedVersions"`
	LatestVersionUnstable bool            `json:"latestVersionUnstable"`
	Listeners             []string        `json:"listeners"`
	HeaderVersions        json.RawMessage `json:"headerVersions"`
	Fields                []jsonField     `json:"fields"`
	CommonStructs         []jsonStruct    `json:"commonStructs"`
}

type jsonStruct struct {
	Name     string      `json:"name"`
	Versions *string     `json:"versions"`
	Fields   []jsonField `json:"fields"`
}

type jsonField struct {
	Name             string          `json:"name"`
	Type             string          `json:"type"`
	Versions         *string         `json:"versions"`
	NullableVersions *string         `json:"nullableVersions"`
	TaggedVersions   *string         `json:"taggedVersions"`
	FlexibleVersions *string         `json:"flexibleVersions"`
	Tag              json.RawMessage `json:"tag"` // a number, or a string holding one
	EntityType       string          `json:"entityType"`
	Default          json.RawMessage `json:"default"`
	MapKey           bool            `json:"mapKey"`
	Ignorable        bool            `json:"ignorable"`
	ZeroCopy         bool            `json:"zeroCopy"`
	About            string          `json:"about"`
	Fields           []jsonField     `json:"fields"`
}

// decodeMessage strips comments and strictly decodes one file.
func decodeMessage(src []byte) (*jsonMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(stripComments(src)))
	dec.DisallowUnknownFields()
	var m jsonMessage
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after the JSON object")
	}
	return &m, nil
}

// defaultText renders a JSON "default" verbatim: a string's contents, or the
// literal text of a number or boolean.
func defaultText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		return s, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", err
	}
	switch v.(type) {
	case float64, bool:
		return string(raw), nil
	}
	return "", fmt.Errorf("default %s is not a string, number or boolean", raw)
}

func decodeStrict(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// tagNumber reads a "tag", written as a JSON number or (in a few files) as
// a string holding a decimal number.
func tagNumber(raw json.RawMessage) (int, error) {
	var n json.Number
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, err
		}
		n = json.Number(s)
	} else if err := json.Unmarshal(raw, &n); err != nil {
		return 0, fmt.Errorf("tag %s is not a number", raw)
	}
	v, err := strconv.Atoi(string(n))
	if err != nil || v < 0 || v > 1<<31-1 {
		return 0, fmt.Errorf("bad tag %s", raw)
	}
	return v, nil
}
