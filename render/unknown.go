package render

import (
	"errors"
	"fmt"

	"github.com/kwire/kwire/protocol"
)

// unknownLabel words a frame's error when all it says is that the schema
// table does not define the API key or version (protocol.UnknownError:
// ErrUnknownAPI, ErrUnknownVers): data kept raw, not a failure to decode,
// which the line, -V, -x and the JSON mark as such
// ("unknown version: ApiVersions v99 is beyond what kwire's schemas
// define (v0-4); body shown raw"), never as a decode error. ok is false
// for any other error.
func unknownLabel(err error) (label string, ok bool) {
	if !errors.Is(err, protocol.ErrUnknownAPI) && !errors.Is(err, protocol.ErrUnknownVers) {
		return "", false
	}
	var ue *protocol.UnknownError
	if !errors.As(err, &ue) {
		// A header version the table lacks: the sentinel alone.
		return "unknown version: " + err.Error() + "; shown raw", true
	}
	if ue.Name == "" {
		return fmt.Sprintf("unknown API: key %d is not one kwire's schemas define; body shown raw", ue.Key), true
	}
	what, shown := ue.Name, "shown raw" // a versioned struct (KIP-848 assignments, consumer protocol)
	if ue.Key >= 0 {
		what, shown = protocol.APIName(ue.Key), "body shown raw"
	}
	k := ue.Known
	rel := "is not one of the versions"
	switch {
	case k.Max < k.Min:
		return fmt.Sprintf("unknown version: %s v%d: kwire's schemas define no version of it; %s", what, ue.Version, shown), true
	case ue.Version > k.Max:
		rel = "is beyond what"
	case ue.Version < k.Min:
		rel = "is below what"
	}
	return fmt.Sprintf("unknown version: %s v%d %s kwire's schemas define (v%d-%d); %s", what, ue.Version, rel, k.Min, k.Max, shown), true
}

// errorLine is the line -V and -x end a frame's tree with when it has an
// error: "error: ..." for a failure, the unknownLabel for an unknown API
// key or version.
func errorLine(err error) (line string, r role) {
	if l, ok := unknownLabel(err); ok {
		return l, roleNote
	}
	return "error: " + err.Error(), roleError
}
