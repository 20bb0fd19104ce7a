package render

import (
	"errors"
	"fmt"

	"github.com/kwire/kwire/protocol"
)

// unknownLabel words the error of tree t when all it says is that the
// schema table does not define the API key or version
// (protocol.UnknownError: ErrUnknownAPI, ErrUnknownVers): data kept raw,
// not a failure to decode, which the line, -V, -x and the JSON mark as
// such ("unknown version: ApiVersions v99 is beyond what kwire's schemas
// define (v0-4); body withheld", or "body shown raw" with
// --show-secrets: bytes not decoded are withheld, protocol's
// withholdRaw), never as a decode error. ok is false for any other error.
func unknownLabel(t *protocol.Tree) (label string, ok bool) {
	err := t.Err
	if !errors.Is(err, protocol.ErrUnknownAPI) && !errors.Is(err, protocol.ErrUnknownVers) {
		return "", false
	}
	raw := "shown raw"
	if unknownWithheld(t.Root, 0) {
		raw = "withheld (bytes not decoded may hold credentials; --show-secrets shows them)"
	}
	var ue *protocol.UnknownError
	if !errors.As(err, &ue) {
		// A header version the table lacks: the sentinel alone.
		return "unknown version: " + err.Error() + "; " + raw, true
	}
	if ue.Name == "" {
		return fmt.Sprintf("unknown API: key %d is not one kwire's schemas define; body %s", ue.Key, raw), true
	}
	what, shown := ue.Name, raw // a versioned struct (KIP-848 assignments, consumer protocol)
	if ue.Key >= 0 {
		what, shown = protocol.APIName(ue.Key), "body "+raw
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

// errorLine is the line -V and -x end tree t with when it has an error:
// "error: ..." for a failure, the unknownLabel for an unknown API key or
// version.
func errorLine(t *protocol.Tree) (line string, r role) {
	if l, ok := unknownLabel(t); ok {
		return l, roleNote
	}
	return "error: " + t.Err.Error(), roleError
}

// unknownWithheld reports whether the raw node of an unknown API key or
// version under n (the frame's body, or a versioned struct in it) is
// withheld.
func unknownWithheld(n *protocol.Node, depth int) bool {
	if n == nil || depth > 8 {
		return false
	}
	if n.Kind == protocol.KindRaw && n.Flags&protocol.FlagUnknown != 0 {
		return n.Flags&protocol.FlagRedacted != 0
	}
	for _, c := range n.Children {
		if unknownWithheld(c, depth+1) {
			return true
		}
	}
	return false
}
