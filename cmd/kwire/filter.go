package main

import (
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/vm"
	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/protocol"
	"github.com/kwire/kwire/reassembly/live"
)

// exprProgram is a compiled --filter expression.
type exprProgram = vm.Program

// exchangeFilter decides which exchanges `kwire read` prints. All set
// conditions must hold.
type exchangeFilter struct {
	apis      map[int16]bool // --api
	topics    []string       // --topic
	clientIDs []string       // --client-id
	errors    bool           // --errors
	stream    int            // --stream; -1 for any
	frames    []frameRange   // --frame; nil for any
	window    *timeWindow    // --since, --until; nil for any
	program   *exprProgram   // --filter
	bodies    bool           // the --filter expression reads request or response headers or bodies
}

// active reports whether any condition is set.
func (f *exchangeFilter) active() bool {
	return len(f.apis) > 0 || len(f.topics) > 0 || len(f.clientIDs) > 0 || f.errors ||
		f.stream >= 0 || len(f.frames) > 0 || f.window.active() || f.program != nil
}

// compileFilter compiles a --filter expression once, typed against
// exchangeFields, and reports whether it reads the frames' headers or
// bodies (which are then built for it). Errors quote the expression with
// a caret under the offending column; a name of the filter language
// before it took the JSON's names says the new one.
func compileFilter(src string) (*exprProgram, bool, error) {
	if tree, err := parser.Parse(src); err == nil {
		var old oldNames
		ast.Walk(&tree.Node, &old)
		if old.found != "" {
			return nil, false, fmt.Errorf("--filter: %s is now %s (--filter uses the names of kwire read --json; see kwire read --help)",
				old.found, renamedFields[old.found])
		}
		var paths messagePaths
		ast.Walk(&tree.Node, &paths)
		if paths.err != nil {
			return nil, false, paths.err
		}
		var apis apiLiterals
		ast.Walk(&tree.Node, &apis)
		if apis.err != nil {
			return nil, false, apis.err
		}
	}
	var uses bodyUse
	p, err := expr.Compile(src, expr.Env(exchangeFields{}), expr.AsBool(), expr.Patch(oldKindNames{}), expr.Patch(&uses))
	if err == nil {
		return p, uses.found, nil
	}
	// Not true or false: say what the expression is, in the filter's
	// words, and how to make a condition of it (expr's own message names
	// Go types: "expected bool, but got *float64").
	if q, err2 := expr.Compile(src, expr.Env(exchangeFields{}), expr.Patch(oldKindNames{})); err2 == nil {
		if msg := notACondition(strings.TrimSpace(src), q.Node().Type()); msg != "" {
			return nil, false, errors.New("--filter: " + msg)
		}
	}
	var fe *file.Error
	if !errors.As(err, &fe) {
		return nil, false, fmt.Errorf("--filter: %v", err)
	}
	line := src
	if lines := strings.Split(src, "\n"); fe.Line >= 1 && fe.Line <= len(lines) {
		line = lines[fe.Line-1]
	}
	col := max(fe.Column, 0)
	msg := fmt.Sprintf("--filter: %s (line %d, column %d)\n  %s\n  %s^",
		nearestNames(fe.Message), fe.Line, col+1, line, strings.Repeat(" ", min(col, len(line))))
	if _, err := live.FileFilter(src); err == nil {
		// tcpdump syntax (port 9092, host 10.0.0.5): a packet filter,
		// which is -f's.
		msg += fmt.Sprintf("\nkwire: '%s' is a capture filter in tcpdump syntax: give it with -f (--filter is an expression over exchanges, e.g. api == \"Fetch\")", strings.TrimSpace(src))
	}
	return nil, false, errors.New(msg)
}

// Messages of expr's for a name that is not there: at the top, or in a
// typed document (facts.group.groupid).
var (
	unknownNameRE = regexp.MustCompile(`^unknown name (\S+)$`)
	noFieldRE     = regexp.MustCompile(`^type (\S+) has no field (\S+)$`)
	badTokenRE    = regexp.MustCompile(`^unexpected token (Operator|Identifier)\("([^"]*)"\)$`)
)

// nearestNames rewrites expr's message for a misspelt name in the filter's
// words, with the nearest names where the name was looked for (the names
// of kwire read --json, from the documents' expr tags); other messages are
// returned as they are.
func nearestNames(msg string) string {
	if m := unknownNameRE.FindStringSubmatch(msg); m != nil {
		if what := kafkaWord(m[1]); what != "" {
			// api == Produce, UNSUPPORTED_VERSION in errors: a text
			// written without its quotes reads as a name.
			return fmt.Sprintf("unknown name %s; %s is %s: write it in quotes, \"%s\" (a text value needs them)", m[1], m[1], what, m[1])
		}
		return fmt.Sprintf("unknown name %s; the nearest: %s (kwire read --json shows the names)",
			m[1], strings.Join(nearest(m[1], exprNames(reflect.TypeFor[exchangeFields]())), ", "))
	}
	if m := badTokenRE.FindStringSubmatch(msg); m != nil {
		// Other languages' operators (SQL's = and AND, a single &):
		// expr's message names the token alone.
		switch kind, tok := m[1], m[2]; {
		case kind == "Operator" && tok == "=":
			return msg + ": compare with == (and >=, <=, != as they are)"
		case kind == "Operator" && tok == "&":
			return msg + ": write && (or and) for both to hold"
		case kind == "Identifier" && (tok == "AND" || tok == "OR"):
			op := map[string]string{"AND": "&&", "OR": "||"}[tok]
			return fmt.Sprintf("%s: write %s (or %s, in lower case)", msg, op, strings.ToLower(tok))
		}
	}
	if m := noFieldRE.FindStringSubmatch(msg); m != nil {
		if t := docType(reflect.TypeFor[exchangeFields](), m[1], 0); t != nil {
			return fmt.Sprintf("no field %s there; the nearest: %s (kwire read --json shows the names)",
				m[2], strings.Join(nearest(m[2], exprNames(t)), ", "))
		}
	}
	return msg
}

// kafkaWord says what word is when it is a value the filter compares
// with, not a name it knows: an API's name (api), a Kafka error's
// (errors), an exchange's kind or a codec; "" otherwise.
func kafkaWord(word string) string {
	switch {
	case slices.Contains(apiNameList(), word):
		return "an API's name"
	case word != "NONE" && isKafkaError(word):
		return "a Kafka error's name"
	case slices.Contains([]string{"paired", "noResponse", "unanswered", "orphan", "sasl", "inFlight"}, word):
		return "an exchange's kind"
	case slices.Contains([]string{"gzip", "snappy", "lz4", "zstd"}, word):
		return "a codec's name"
	}
	return ""
}

func isKafkaError(name string) bool {
	_, ok := protocol.KafkaErrorCode(name)
	return ok
}

// exprNames returns the names --filter knows t's fields by (their expr
// tags).
func exprNames(t reflect.Type) []string {
	var names []string
	for f := range t.Fields() {
		if name, _, _ := strings.Cut(f.Tag.Get("expr"), ","); name != "" && name != "-" {
			names = append(names, name)
		}
	}
	return names
}

// docType finds the struct type named name (as reflect prints it:
// "render.GroupDoc") among those reachable from t's fields.
func docType(t reflect.Type, name string, depth int) reflect.Type {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || depth > 8 {
		return nil
	}
	if t.String() == name {
		return t
	}
	for f := range t.Fields() {
		if f.IsExported() {
			if found := docType(f.Type, name, depth+1); found != nil {
				return found
			}
		}
	}
	return nil
}

// nearest returns the three names closest to name by edit distance
// (case aside), closest first.
func nearest(name string, names []string) []string {
	slices.SortStableFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(editDistance(strings.ToLower(name), strings.ToLower(a)), editDistance(strings.ToLower(name), strings.ToLower(b))), cmp.Compare(a, b))
	})
	return names[:min(len(names), 3)]
}

// notACondition says what an expression whose value has type t is, when
// not true or false, and how to make a filter of it; "" when t may be a
// condition (bool, or unknown until run: a body's field).
func notACondition(src string, t reflect.Type) string {
	if t == nil {
		return ""
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	what, hint := "", ""
	switch t.Kind() {
	case reflect.Bool, reflect.Interface:
		return ""
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8,
		reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		what, hint = "a number", src+" > 100"
	case reflect.String:
		what, hint = "text", src+` == "..."`
	case reflect.Slice, reflect.Array:
		what, hint = "a list", "len("+src+") > 0, or \"...\" in "+src
	case reflect.Map, reflect.Struct:
		what, hint = "an object", src+".NAME == ..., one of its fields (kwire read --json shows them)"
	default:
		return ""
	}
	return fmt.Sprintf("%s is %s; a filter must be true or false: compare it, e.g. %s", src, what, hint)
}

// renamedFields are the names --filter used before it took the JSON's.
var renamedFields = map[string]string{
	"api_key": "apiKey", "version": "apiVersion", "correlation_id": "correlationId", "client_id": "clientId",
	"latency_ms": "latencyMs", "request_size": "request.size", "response_size": "response.size",
}

// oldNames finds the first identifier of the old filter names.
type oldNames struct{ found string }

func (o *oldNames) Visit(n *ast.Node) {
	if id, ok := (*n).(*ast.IdentifierNode); ok && o.found == "" {
		if _, old := renamedFields[id.Value]; old {
			o.found = id.Value
		}
	}
}

// bodyUse notes whether an expression reads "header" or "body" of a
// frame.
type bodyUse struct{ found bool }

func (u *bodyUse) Visit(n *ast.Node) {
	if m, ok := (*n).(*ast.MemberNode); ok {
		if s, ok := m.Property.(*ast.StringNode); ok && (s.Value == "body" || s.Value == "header") {
			u.found = true
		}
	}
}

// match reports whether ex passes the filter. f is its fields, computed
// once by the caller. An expression that fails at run time (e.g. an index
// out of range) does not match.
func (fl *exchangeFilter) match(ex *dissect.Exchange, f *exchangeFields) bool {
	if len(fl.apis) > 0 && !fl.apis[ex.APIKey] {
		return false
	}
	if fl.stream >= 0 && (ex.Conn == nil || ex.Conn.Index != fl.stream) {
		return false
	}
	if len(fl.frames) > 0 && !matchFrames(fl.frames, ex) {
		return false
	}
	if fl.window.active() && !fl.window.match(ex) {
		return false
	}
	if len(fl.clientIDs) > 0 && (ex.Request == nil || !slices.Contains(fl.clientIDs, ex.ClientID)) {
		return false
	}
	if len(fl.topics) > 0 && !slices.ContainsFunc(fl.topics, f.hasTopic) {
		return false
	}
	if fl.errors && len(f.Errors) == 0 {
		return false
	}
	if fl.program != nil {
		out, err := expr.Run(fl.program, f)
		if err != nil {
			return false
		}
		if ok, _ := out.(bool); !ok {
			return false
		}
	}
	return true
}

// oldKindNames lets expressions compare kind with the spelling kwire used
// before --filter's kinds were made the same as --json's: "no-response"
// for "noResponse", in kind == "...", kind != "..." and kind in [...].
type oldKindNames struct{}

func (oldKindNames) Visit(n *ast.Node) {
	b, ok := (*n).(*ast.BinaryNode)
	if !ok {
		return
	}
	id, ok := b.Left.(*ast.IdentifierNode)
	other := b.Right
	if !ok {
		id, ok = b.Right.(*ast.IdentifierNode)
		other = b.Left
	}
	if !ok || id.Value != "kind" {
		return
	}
	fix := func(n ast.Node) {
		if s, ok := n.(*ast.StringNode); ok && s.Value == "no-response" {
			s.Value = "noResponse"
		}
	}
	switch b.Operator {
	case "==", "!=":
		fix(other)
	case "in", "not in":
		if a, ok := b.Right.(*ast.ArrayNode); ok && b.Left == ast.Node(id) {
			for _, e := range a.Nodes {
				fix(e)
			}
		}
	}
}
