package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/kwire/kwire/protocol"
	"github.com/spf13/cobra"
)

type apisOptions struct {
	JSON bool
}

func newAPIsCmd(s *ioStreams) *cobra.Command {
	o := &apisOptions{}
	cmd := &cobra.Command{
		Use:   "apis",
		Short: "List the Kafka API keys kwire can decode",
		Long: `List every Kafka API key in kwire's schema table with its name, the range
of versions any Kafka release defines and the first flexible version (the
first that uses compact encodings and tagged fields, KIP-482).

The text output has one row per key: KEY NAME VERSIONS FLEXIBLE, where
FLEXIBLE is "none" for APIs that never became flexible.
The JSON output is one array of {"key","name","minVersion","maxVersion",
"firstFlexible"} objects; firstFlexible is -1 when none.`,
		Example: `  kwire apis
  kwire apis --json | jq '.[] | select(.api == "Fetch")'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAPIs(o, s.Out, protocol.APIs())
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print a JSON array instead of a table")
	return cmd
}

// apiJSON is one element of `kwire apis --json`.
type apiJSON struct {
	Key           int16  `json:"apiKey"`
	Name          string `json:"api"`
	MinVersion    int16  `json:"minVersion"`
	MaxVersion    int16  `json:"maxVersion"`
	FirstFlexible int16  `json:"firstFlexible"` // -1: never flexible
}

func runAPIs(o *apisOptions, w io.Writer, apis []protocol.APIInfo) error {
	if o.JSON {
		out := make([]apiJSON, 0, len(apis))
		for _, a := range apis {
			out = append(out, apiJSON{a.Key, a.Name, a.Versions.Min, a.Versions.Max, a.FirstFlexible})
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tNAME\tVERSIONS\tFLEXIBLE")
	for _, a := range apis {
		flex := "none"
		if a.FirstFlexible >= 0 {
			flex = strconv.Itoa(int(a.FirstFlexible)) + "+"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", a.Key, a.Name, versionRange(a.Versions), flex)
	}
	return tw.Flush()
}

// versionRange formats an inclusive range as "0-13", "3" or "none".
func versionRange(r protocol.Versions) string {
	switch {
	case r.Empty():
		return "none"
	case r.Min == r.Max:
		return strconv.Itoa(int(r.Min))
	}
	return fmt.Sprintf("%d-%d", r.Min, r.Max)
}
