package main

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/expr-lang/expr/ast"
	"github.com/kwire/kwire/protocol"
)

// A --filter path into a message (request.body.topicData[0].name,
// response.header.correlationId) is checked against Kafka's schemas when
// the expression is compiled: bodies are untyped (JsonConverter form,
// built per exchange), so a misspelt name would match nothing, silently.
// A path is refused when no API's request (response) of any version,
// with its headers, has fields by those names nested that way; the
// message suggests the nearest names that do.

// schemaNode is the union, over every schema of one kind (request bodies,
// response bodies, request headers, response headers) of every version,
// of the fields at one place in the message: their JsonConverter names
// and what is under each.
type schemaNode struct {
	fields map[string]*schemaNode
}

func (n *schemaNode) add(fs []protocol.Field) {
	for i := range fs {
		f := &fs[i]
		name := lowerFirstRune(f.Name)
		c := n.fields[name]
		if c == nil {
			c = &schemaNode{fields: map[string]*schemaNode{}}
			n.fields[name] = c
		}
		c.add(f.Fields) // a struct's fields, or an array's elements'
	}
}

// lowerFirstRune names a field as Kafka's JsonConverter does: its schema
// name with the first letter lower-cased.
func lowerFirstRune(s string) string {
	if s == "" || s[0] < 'A' || s[0] > 'Z' {
		return s
	}
	return string(s[0]+'a'-'A') + s[1:]
}

// schemaTrees are the unions by frame ("request", "response") and part
// ("body", "header").
var schemaTrees = sync.OnceValue(func() map[[2]string]*schemaNode {
	t := map[[2]string]*schemaNode{}
	for _, k := range [][2]string{{"request", "body"}, {"response", "body"}, {"request", "header"}, {"response", "header"}} {
		t[k] = &schemaNode{fields: map[string]*schemaNode{}}
	}
	for _, m := range protocol.Schemas {
		switch {
		case m.Type == protocol.TypeRequest:
			t[[2]string{"request", "body"}].add(m.Fields)
		case m.Type == protocol.TypeResponse:
			t[[2]string{"response", "body"}].add(m.Fields)
		case m.Type == protocol.TypeHeader && strings.HasPrefix(m.Name, "Request"):
			t[[2]string{"request", "header"}].add(m.Fields)
		case m.Type == protocol.TypeHeader && strings.HasPrefix(m.Name, "Response"):
			t[[2]string{"response", "header"}].add(m.Fields)
		}
	}
	return t
})

// messagePaths checks every path into a request's or response's body or
// header (an ast.Visitor); err is the first that names no field.
type messagePaths struct{ err error }

func (v *messagePaths) Visit(n *ast.Node) {
	m, ok := (*n).(*ast.MemberNode)
	if !ok || v.err != nil {
		return
	}
	// The chain from its root: request.body.foo[0].bar is
	// Member(Member(Member(Member(request, body), foo), 0), bar).
	var steps []ast.Node
	var root ast.Node = m
	for {
		mm, ok := root.(*ast.MemberNode)
		if !ok {
			break
		}
		steps = append(steps, mm.Property)
		root = mm.Node
		if c, ok := root.(*ast.ChainNode); ok {
			root = c.Node
		}
	}
	id, ok := root.(*ast.IdentifierNode)
	if !ok || (id.Value != "request" && id.Value != "response") {
		return
	}
	slices.Reverse(steps)
	var names []string // the field names after body or header
	var part string
	for i, s := range steps {
		str, ok := s.(*ast.StringNode)
		if !ok {
			if i == 0 {
				return
			}
			names = append(names, "") // an index: an array's element
			continue
		}
		if i == 0 {
			if str.Value != "body" && str.Value != "header" {
				return // frame, size, time...: typed, checked by expr
			}
			part = str.Value
			continue
		}
		names = append(names, str.Value)
	}
	if part == "" {
		return
	}
	node := schemaTrees()[[2]string{id.Value, part}]
	path := id.Value + "." + part
	for _, name := range names {
		if name == "" {
			path += "[...]"
			continue
		}
		next := node.fields[name]
		if next == nil {
			v.err = pathError(id.Value, path, name, node)
			return
		}
		path += "." + name
		node = next
	}
}

// pathError says that under path no schema has a field name, and the
// nearest names there are.
func pathError(frame, path, name string, node *schemaNode) error {
	if len(node.fields) == 0 {
		return fmt.Errorf("--filter: %s.%s: %s holds a value, not fields, in every API's %s", path, name, path, frame)
	}
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	for n := range node.fields {
		cs = append(cs, cand{n, editDistance(strings.ToLower(name), strings.ToLower(n))})
	}
	slices.SortFunc(cs, func(a, b cand) int { return cmp.Or(cmp.Compare(a.d, b.d), cmp.Compare(a.name, b.name)) })
	var near []string
	for _, c := range cs[:min(len(cs), 3)] {
		near = append(near, path+"."+c.name)
	}
	return fmt.Errorf("--filter: %s.%s: no API's %s has a field %s there (in any version); the nearest: %s (kwire read --json shows a message's fields)",
		path, name, frame, name, strings.Join(near, ", "))
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// apiLiterals refuses a comparison of api with a text that names no API
// as the exchanges name them (api == "produce" matched nothing, silently:
// api holds Kafka's name, "Produce"), with the name meant or the nearest.
// The empty text (an orphan whose API is not known) and "UNKNOWN(N)" are
// names api can hold.
type apiLiterals struct{ err error }

func (v *apiLiterals) Visit(n *ast.Node) {
	b, ok := (*n).(*ast.BinaryNode)
	if !ok || v.err != nil {
		return
	}
	var lits []string
	switch b.Operator {
	case "==", "!=":
		id, str := b.Left, b.Right
		if _, ok := id.(*ast.IdentifierNode); !ok {
			id, str = str, id
		}
		if i, ok := id.(*ast.IdentifierNode); ok && i.Value == "api" {
			if s, ok := str.(*ast.StringNode); ok {
				lits = append(lits, s.Value)
			}
		}
	case "in", "not in":
		if i, ok := b.Left.(*ast.IdentifierNode); ok && i.Value == "api" {
			if arr, ok := b.Right.(*ast.ArrayNode); ok {
				for _, e := range arr.Nodes {
					if s, ok := e.(*ast.StringNode); ok {
						lits = append(lits, s.Value)
					}
				}
			}
		}
	}
	names := apiNameList()
	for _, l := range lits {
		if l == "" || slices.Contains(names, l) || strings.HasPrefix(l, "UNKNOWN(") {
			continue
		}
		if isDigits(l) {
			v.err = fmt.Errorf("--filter: api holds an API's name, not its key: compare apiKey with %s", l)
		} else if k, err := parseAPI(l); err == nil {
			v.err = fmt.Errorf("--filter: api is %q as Kafka names it, not %q (api holds the name as written; --api takes any case)", protocol.APIName(k), l)
		} else {
			v.err = fmt.Errorf("--filter: no API is named %q; the nearest: %s (api holds the name as Kafka writes it; see 'kwire apis')", l, strings.Join(nearest(l, names), ", "))
		}
		return
	}
}

// isDigits reports whether s is a decimal number (an API key, which api
// does not hold: apiKey does).
func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}
