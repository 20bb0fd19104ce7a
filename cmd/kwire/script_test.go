package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets the test binary run as "kwire" inside the scripts.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){"kwire": main})
}

// TestScripts runs the CLI scripts in testdata/script. Besides the standard
// testscript commands they have:
//
//	exitcode N prog args...   run prog and expect exit status N
//	jsonlines stdout|FILE     every non-empty line is a JSON value (NDJSON)
//	jsondoc stdout|FILE       the whole file is one JSON value
//	everyline stdout|FILE SEL WANT
//	                          every line matching regexp SEL matches WANT
//	                          too, and at least one line matches SEL
//	headbytes SRC N DST       copy the first N bytes of SRC to DST
//
// the condition [pcap:NAME], true when pcaps/NAME exists, and $PCAPS, the
// absolute path of the repository's pcaps directory.
func TestScripts(t *testing.T) {
	pcaps, err := filepath.Abs(filepath.Join("..", "..", "pcaps"))
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join("testdata", "script"),
		Setup: func(env *testscript.Env) error {
			env.Setenv("PCAPS", pcaps)
			env.Setenv("NO_COLOR", "")
			return nil
		},
		Condition: func(cond string) (bool, error) {
			if name, ok := strings.CutPrefix(cond, "pcap:"); ok {
				_, err := os.Stat(filepath.Join(pcaps, name))
				return err == nil, nil
			}
			return false, errors.New("unknown condition " + cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode":  cmdExitCode,
			"jsonlines": func(ts *testscript.TestScript, neg bool, args []string) { cmdJSON(ts, neg, args, true) },
			"jsondoc":   func(ts *testscript.TestScript, neg bool, args []string) { cmdJSON(ts, neg, args, false) },
			"everyline": cmdEveryLine,
			"headbytes": cmdHeadBytes,
		},
	})
}

func cmdExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode N prog [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: %v", err)
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("exitcode: %v", err)
	}
	if got != want {
		ts.Fatalf("exit status %d, want %d", got, want)
	}
}

func cmdJSON(ts *testscript.TestScript, neg bool, args []string, lines bool) {
	if len(args) != 1 {
		ts.Fatalf("usage: jsonlines|jsondoc stdout|FILE")
	}
	data := ts.ReadFile(args[0])
	var bad error
	if lines {
		sc := bufio.NewScanner(strings.NewReader(data))
		sc.Buffer(nil, 64<<20)
		n := 0
		for sc.Scan() {
			n++
			if l := bytes.TrimSpace(sc.Bytes()); len(l) > 0 && !json.Valid(l) {
				bad = errors.New("line " + strconv.Itoa(n) + " is not JSON")
				break
			}
		}
	} else if !json.Valid([]byte(data)) {
		bad = errors.New("not one JSON document")
	}
	if bad != nil && !neg {
		ts.Fatalf("%s: %v", args[0], bad)
	}
	if bad == nil && neg {
		ts.Fatalf("%s: valid JSON", args[0])
	}
}

func cmdEveryLine(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: everyline stdout|FILE SELECT WANT")
	}
	sel, err := regexp.Compile(args[1])
	ts.Check(err)
	want, err := regexp.Compile(args[2])
	ts.Check(err)
	n := 0
	for _, l := range strings.Split(ts.ReadFile(args[0]), "\n") {
		if !sel.MatchString(l) {
			continue
		}
		n++
		if !want.MatchString(l) {
			ts.Fatalf("%s: line %q does not match %q", args[0], l, args[2])
		}
	}
	if n == 0 {
		ts.Fatalf("%s: no line matches %q", args[0], args[1])
	}
}

func cmdHeadBytes(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: headbytes SRC N DST")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	data, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[2]), data[:min(n, len(data))], 0o644))
}
