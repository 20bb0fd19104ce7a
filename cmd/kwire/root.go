package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Exit codes, documented in the root command's help.
const (
	exitOK    = 0
	exitData  = 1 // input read, but not all of it decoded, or a capture was cut short
	exitUsage = 2 // usage error or unusable input
)

// exitError is an error with the exit code it maps to. Errors that are not
// exitErrors are cobra's own argument and flag errors: usage errors.
type exitError struct {
	code int
	err  error // nil when the command has already told the user
	full bool  // err names the command itself: printed without "kwire: "
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// usageErrorf returns an exit-2 error.
func usageErrorf(format string, a ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, a...)}
}

// dataErrorf returns an exit-1 error.
func dataErrorf(format string, a ...any) error {
	return &exitError{code: exitData, err: fmt.Errorf(format, a...)}
}

// silentExit returns an error that only sets the exit code: the command
// has printed its own diagnostics.
func silentExit(code int) error { return &exitError{code: code} }

// globalOptions are the flags every command shares.
type globalOptions struct {
	Color   string // auto, always or never
	ASCII   bool   // --ascii (set or not: asciiSet)
	Profile profileOptions

	prof *profiler // started before the command runs, stopped by run
}

// colorEnabled resolves --color: "auto" colours only a terminal, and never
// when NO_COLOR is set to a non-empty value (https://no-color.org) or TERM
// is "dumb".
func (g *globalOptions) colorEnabled(s *ioStreams) bool {
	switch g.Color {
	case "always":
		return true
	case "never":
		return false
	}
	if s.Getenv != nil && (s.Getenv("NO_COLOR") != "" || s.Getenv("TERM") == "dumb") {
		return false
	}
	return s.OutTTY
}

func (g *globalOptions) validate() error {
	switch g.Color {
	case "auto", "always", "never":
		return nil
	}
	return usageErrorf("--color must be auto, always or never, not %q", g.Color)
}

func newRootCmd(s *ioStreams) *cobra.Command {
	return newRootCmdWith(s, &globalOptions{Color: "auto"})
}

// newRootCmdWith is newRootCmd with the global options in g, which run
// reads back once the command has run (to stop the profiles).
// helpWidth is the width --help wraps flag descriptions at.
const helpWidth = 100

func newRootCmdWith(s *ioStreams, g *globalOptions) *cobra.Command {
	root := &cobra.Command{
		Use:   "kwire",
		Short: "Dissect the Kafka wire protocol",
		Long: `kwire decodes Apache Kafka's binary protocol: single frames, bodies and
structs given as hex, and every request and response in pcap/pcapng captures.

Exit status:
  0  success
  1  the input was read but part of it could not be decoded or dissected
     (everything that was decoded is still printed): a frame that failed
     to decode, a capture cut short, bytes lost, garbage skipped; unknown
     API keys and versions in captures are data, not failures
  2  usage error, or unusable input (bad hex, a file that is not a capture)`,
		Example: `  # Decode a request frame given as hex
  kwire decode 0000001300120000010203040009776972652d72656164

  # Dissect a capture, one line per exchange
  kwire read kafka.pcapng

  # Only failed Produce requests, as NDJSON
  kwire read --api Produce --errors --json kafka.pcapng

  # List the API keys and versions kwire knows
  kwire apis`,
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if err := g.validate(); err != nil {
				return err
			}
			json := false
			if f := cmd.Flags().Lookup("json"); f != nil {
				json = f.Value.String() == "true"
			}
			useASCII(s, g.ASCII, cmd.Flags().Changed("ascii"), json)
			useTermSafe(s, cmd, json, g.colorEnabled(s))
			getenv := s.Getenv
			if getenv == nil {
				getenv = func(string) string { return "" }
			}
			p, err := startProfiles(g.Profile, getenv, cmd.Name())
			g.prof = p
			return err
		},
	}
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.ErrOut)
	// kwire --version, as many tools take it: kwire version's text. The
	// template is that text, its braces (none in versions) escaped.
	b := readBuildInfo()
	root.Version = b.Version
	root.Flags().Bool("version", false, "print kwire's version, commit and Go version (as kwire version)")
	root.SetVersionTemplate(strings.NewReplacer("{{", "{{`{{`}}", "}}", "{{`}}`}}").Replace(b.text()))
	// Flag descriptions wrapped at helpWidth columns, their continuation
	// lines aligned under the first (cobra's template writes each on one
	// line, some of 600 characters).
	cobra.AddTemplateFunc("wrapFlags", func(fs *pflag.FlagSet) string { return fs.FlagUsagesWrapped(helpWidth) })
	root.SetUsageTemplate(strings.NewReplacer(
		".LocalFlags.FlagUsages", "(wrapFlags .LocalFlags)",
		".InheritedFlags.FlagUsages", "(wrapFlags .InheritedFlags)",
	).Replace(root.UsageTemplate()))
	root.PersistentFlags().StringVar(&g.Color, "color", g.Color, "colorize output: auto, always or never (auto honours NO_COLOR)")
	root.PersistentFlags().BoolVar(&g.ASCII, "ascii", false, "plain ASCII text: -> for →, x for ×, ... for …, other characters as \\u escapes (the default when the locale, LC_ALL/LC_CTYPE/LANG, is set and not UTF-8; --ascii=false: never; JSON stays UTF-8)")
	_ = root.RegisterFlagCompletionFunc("color", cobra.FixedCompletions(
		[]string{"auto", "always", "never"}, cobra.ShellCompDirectiveNoFileComp))
	pf := root.PersistentFlags()
	pf.StringVar(&g.Profile.CPU, "cpuprofile", "", "write a CPU profile (pprof) of the command to `file` (for bug reports; KWIRE_PPROF=DIR writes one into DIR)")
	pf.StringVar(&g.Profile.Mem, "memprofile", "", "write an allocation profile (pprof) to `file` when the command ends")
	pf.StringVar(&g.Profile.Trace, "trace", "", "write a Go execution trace (go tool trace) of the command to `file`")
	for _, n := range []string{"cpuprofile", "memprofile", "trace"} {
		_ = root.MarkPersistentFlagFilename(n)
	}
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return &exitError{code: exitUsage, err: fmt.Errorf("%w\nRun '%s --help' for usage", flagError(err), cmd.CommandPath())}
	})

	root.AddCommand(
		newVersionCmd(s),
		newAPIsCmd(s),
		newDecodeCmd(s, g),
		newReadCmd(s, g),
		newStatsCmd(s, g),
		newVersionsCmd(s, g),
		newGroupsCmd(s, g),
		newTxnsCmd(s, g),
		newDiffCmd(s, g),
		newCheckCmd(s, g),
		newLiveCmd(s, g),
	)
	// cobra's own completion command, with an example like every other.
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			c.Example = `  # bash, for the current shell
  source <(kwire completion bash)

  # zsh, installed for every shell
  kwire completion zsh > "${fpath[1]}/_kwire"`
		}
	}
	return root
}

// flagError words the errors pflag returns for a bad value of one of its
// own flag types, whose cause is a Go parsing error ("strconv.ParseInt:
// parsing \"x\": invalid syntax", "time: invalid duration"), in kwire's
// words; kwire's own flag values (sizes, ports) word theirs already.
func flagError(err error) error {
	var ive *pflag.InvalidValueError
	if !errors.As(err, &ive) {
		return err
	}
	f := ive.GetFlag()
	name := "--" + f.Name
	if f.Shorthand != "" {
		name = "-" + f.Shorthand + ", " + name
	}
	var why string
	var ne *strconv.NumError
	switch typ := f.Value.Type(); {
	case errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange):
		why = "out of range"
	case typ == "duration":
		why = "not a duration such as 30s, 10m or 1h30m"
	case typ == "bool":
		why = "not true or false"
	case strings.HasPrefix(typ, "int") || strings.HasPrefix(typ, "uint"):
		why = "not a whole number"
	case strings.HasPrefix(typ, "float"):
		why = "not a number"
	case errors.As(err, &ne):
		why = "not a valid value"
	default:
		return err // kwire's own Value: already worded
	}
	return fmt.Errorf("invalid argument %q for %q flag: %s", ive.GetValue(), name, why)
}

// run executes kwire with args and returns the exit code. The first
// interrupt (Ctrl-C) cancels the command's context, so that `kwire read -`
// on a live capture stops between packets and still prints its summary; a
// second one ends the process as usual.
func run(args []string, s *ioStreams) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		stop()
	}()
	g := &globalOptions{Color: "auto"}
	root := newRootCmdWith(s, g)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if g.prof.watching() && brokenPipe(err) {
		// The output's reader went away while profiles were written
		// (watchBrokenPipe): end as an unprofiled kwire ends, by the
		// status of a SIGPIPE, without a message.
		if err := g.prof.stop(); err != nil {
			fmt.Fprintf(s.ErrOut, "kwire: %v\n", err)
		}
		return exitBrokenPipe
	}
	code := exitCode(err, s.ErrOut)
	if err := g.prof.stop(); err != nil {
		fmt.Fprintf(s.ErrOut, "kwire: %v\n", err)
		code = max(code, exitData)
	}
	flushOut(s)
	return code
}

// exitCode reports err on w and maps it to an exit code.
func exitCode(err error, w io.Writer) int {
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		switch {
		case ee.err != nil && ee.full:
			fmt.Fprintf(w, "%v\n", ee.err)
		case ee.err != nil:
			fmt.Fprintf(w, "kwire: %v\n", ee.err)
		}
		return ee.code
	}
	fmt.Fprintf(w, "kwire: %v\n", err)
	return exitUsage
}
