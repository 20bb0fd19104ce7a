// Command schemagen generates kwire's schema table, protocol/zz_schema.go,
// from Apache Kafka's message JSON files. It runs from `go generate
// ./protocol` (the //go:generate line in protocol/schema.go), so its working
// directory is the protocol package.
//
// Inputs are one or more message folders, newest generation first:
//
//	schemagen -out zz_schema.go                       # ../shared/kafka-schemas, both generations
//	schemagen -dir trunk=$KAFKA/clients/src/main/resources/common/message \
//	          -dir 3.9.0-rc3=../shared/kafka-schemas/3.9.0-rc3 -out zz_schema.go
//
// A -dir value is PATH or NAME=PATH; NAME (default: the folder's base name)
// is recorded as MessageSchema.Generation. Without -dir, the generations in
// gen.DefaultGenerations are read from $KWIRE_SHARED/kafka-schemas, or from
// ../shared/kafka-schemas next to the module root (the nearest go.mod above
// the working directory).
//
// kwire's own definitions, the structs Kafka embeds without a JSON file
// (Kafka Connect's group protocol), are read after the generations from
// protocol/schemas under the module root (gen.OwnDir), or from -own PATH.
//
// With -check, nothing is written; the exit status is 1 if the output file
// is missing or differs from what would be generated (for CI).
//
// Any malformed input (unknown type, unresolvable struct name, bad version
// string, unknown JSON key) is reported on stderr with exit status 1.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/kwire/kwire/protocol/internal/schemagen/gen"
)

type dirList []string

func (d *dirList) String() string     { return strings.Join(*d, ",") }
func (d *dirList) Set(v string) error { *d = append(*d, v); return nil }

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("schemagen", flag.ContinueOnError)
	fl.SetOutput(stderr)
	var dirs dirList
	fl.Var(&dirs, "dir", "message JSON folder, PATH or NAME=PATH; repeat, newest generation first")
	own := fl.String("own", "", "folder of kwire's own message JSON files (default: "+gen.OwnDir+" under the module root)")
	out := fl.String("out", "zz_schema.go", "output file")
	check := fl.Bool("check", false, "do not write; exit 1 if the output file would change")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(stderr, "schemagen: unexpected arguments %q\n", fl.Args())
		return 2
	}
	inputs, err := resolveInputs(dirs, *own)
	if err != nil {
		fmt.Fprintf(stderr, "schemagen: %v\n", err)
		return 1
	}
	src, err := gen.Generate(inputs)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if *check {
		old, err := os.ReadFile(*out)
		if err != nil {
			fmt.Fprintf(stderr, "schemagen: %v\n", err)
			return 1
		}
		if !bytes.Equal(old, src) {
			fmt.Fprintf(stderr, "schemagen: %s is out of date; run `go generate ./protocol`\n", *out)
			return 1
		}
		fmt.Fprintf(stdout, "schemagen: %s is up to date\n", *out)
		return 0
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		fmt.Fprintf(stderr, "schemagen: %v\n", err)
		return 1
	}
	return 0
}

func resolveInputs(dirs []string, own string) ([]gen.Input, error) {
	if len(dirs) == 0 {
		shared, err := sharedDir()
		if err != nil {
			return nil, err
		}
		for _, g := range gen.DefaultGenerations {
			dirs = append(dirs, g+"="+filepath.Join(shared, "kafka-schemas", g))
		}
	}
	var inputs []gen.Input
	for _, d := range dirs {
		name, dir, ok := strings.Cut(d, "=")
		if !ok {
			dir = d
			name = filepath.Base(filepath.Clean(d))
		}
		if name == "" || dir == "" {
			return nil, fmt.Errorf("bad -dir %q: want PATH or NAME=PATH", d)
		}
		st, err := os.Stat(dir)
		if err != nil {
			return nil, fmt.Errorf("input folder: %w", err)
		}
		if !st.IsDir() {
			return nil, fmt.Errorf("input %s is not a folder", dir)
		}
		inputs = append(inputs, gen.Input{Name: name, FS: os.DirFS(dir)})
	}
	if own == "" {
		root, err := moduleRoot()
		if err != nil {
			return nil, err
		}
		own = filepath.Join(root, filepath.FromSlash(gen.OwnDir))
	}
	if st, err := os.Stat(own); err != nil {
		return nil, fmt.Errorf("kwire's own definitions: %w", err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("kwire's own definitions: %s is not a folder", own)
	}
	inputs = append(inputs, gen.Input{Name: gen.OwnName, FS: os.DirFS(own), Own: true})
	return inputs, nil
}

// sharedDir returns $KWIRE_SHARED, or ../shared relative to the module root.
func sharedDir() (string, error) {
	if s := os.Getenv("KWIRE_SHARED"); s != "" {
		return s, nil
	}
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "..", "shared"), nil
}

// moduleRoot returns the nearest folder holding a go.mod above the working
// directory.
func moduleRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory; use -dir or set KWIRE_SHARED")
		}
		dir = parent
	}
}
