package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// version is the release version; release builds set it with
// -ldflags "-X main.version=v1.2.3". Otherwise the module version from the
// build info is used.
var version = ""

// buildInfo is what `kwire version` prints.
type buildInfo struct {
	Version   string
	GoVersion string
	Commit    string // vcs.revision, when the binary was built from a checkout
	Time      string // vcs.time
	Modified  bool   // vcs.modified
}

// readBuildInfo collects the version and VCS stamps embedded by the Go
// toolchain (runtime/debug.ReadBuildInfo).
func readBuildInfo() buildInfo {
	b := buildInfo{Version: version, GoVersion: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		if b.Version == "" {
			b.Version = "unknown"
		}
		return b
	}
	if b.Version == "" {
		b.Version = bi.Main.Version
	}
	if b.Version == "" {
		b.Version = "(devel)"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

func newVersionCmd(s *ioStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print kwire's version, commit and Go version",
		Long: `Print kwire's version, the commit it was built from (when the build
recorded version control information) and the Go version that built it.`,
		Example: `  kwire version`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := io.WriteString(s.Out, readBuildInfo().text())
			return err
		},
	}
}

// text is what kwire version (and kwire --version) prints: the version,
// the commit and its time when recorded, and the Go version.
func (b buildInfo) text() string {
	var w strings.Builder
	fmt.Fprintf(&w, "kwire %s\n", b.Version)
	if b.Commit != "" {
		dirty := ""
		if b.Modified {
			dirty = " (modified)"
		}
		fmt.Fprintf(&w, "commit: %s%s\n", b.Commit, dirty)
		if b.Time != "" {
			fmt.Fprintf(&w, "commit time: %s\n", b.Time)
		}
	}
	fmt.Fprintf(&w, "go: %s\n", b.GoVersion)
	return w.String()
}
