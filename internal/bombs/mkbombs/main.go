// Command mkbombs writes the hostile corpus of package bombs as pcap
// files into a directory, one per capture, for measuring kwire on them
// (make bench-bombs).
//
//	go run ./internal/bombs/mkbombs [-small] [-only NAME,...] DIR
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kwire/kwire/internal/bombs"
)

func main() {
	small := flag.Bool("small", false, "the tests' scale instead of the issue's")
	only := flag.String("only", "", "comma-separated capture names to write (default: all)")
	list := flag.Bool("list", false, "list the captures and what they hold, and write nothing")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: mkbombs [-small] [-only NAME,...] [-list] DIR")
		flag.PrintDefaults()
	}
	flag.Parse()
	scale := bombs.Full
	if *small {
		scale = bombs.Small
	}
	corpus := bombs.Corpus(scale)
	if *list {
		for _, c := range corpus {
			fmt.Printf("%-24s %s\n", c.Name, c.About)
		}
		return
	}
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	dir := flag.Arg(0)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "mkbombs:", err)
		os.Exit(1)
	}
	var names []string
	if *only != "" {
		names = strings.Split(*only, ",")
	}
	for _, c := range corpus {
		if names != nil && !slices.Contains(names, c.Name) {
			continue
		}
		path := filepath.Join(dir, c.Name+".pcap")
		if err := os.WriteFile(path, c.Pcap(), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "mkbombs:", err)
			os.Exit(1)
		}
		st, _ := os.Stat(path)
		fmt.Printf("%-24s %9d bytes  %s\n", c.Name, st.Size(), c.About)
	}
}
