package protocol

import (
	"encoding/json"
	"testing"
)

// Every field of the schema table, element fields included, has its
// JsonConverter name made once: lowerFirst of its name, given without an
// allocation, and its JSON key (the name quoted, a colon) as encoding/json
// writes it.
func TestJSONNames(t *testing.T) {
	var fields []*Field
	var walk func(fs []Field)
	walk = func(fs []Field) {
		for i := range fs {
			f := &fs[i]
			fields = append(fields, f)
			if e := f.ElemField(); e != nil {
				fields = append(fields, e)
			}
			walk(f.Fields)
		}
	}
	for _, m := range Schemas {
		walk(m.Fields)
	}
	if len(fields) < 2000 {
		t.Fatalf("only %d fields", len(fields))
	}
	for _, f := range fields {
		if f.jsonName == "" || f.JSONName() != lowerFirst(f.Name) {
			t.Fatalf("%s: JSON name %q (made %q), want %q", f.Name, f.JSONName(), f.jsonName, lowerFirst(f.Name))
		}
		key, _ := json.Marshal(f.JSONName())
		if f.JSONKey() != string(key)+":" {
			t.Fatalf("%s: JSON key %q, want %s:", f.Name, f.JSONKey(), key)
		}
	}
	if a := testing.AllocsPerRun(3, func() {
		for _, f := range fields {
			_ = f.JSONName()
		}
	}); a != 0 {
		t.Errorf("JSONName of %d fields: %.0f allocations, want 0", len(fields), a)
	}
	if got := (&Field{Name: "ClientId"}).JSONName(); got != "clientId" {
		t.Errorf("a field outside the table: %q, want clientId", got)
	}
	for name, want := range map[string]string{"ClientId": `"clientId":`, "A<b": "", "": "", "Été": ""} {
		if got := jsonKeyOf(name); got != want {
			t.Errorf("jsonKeyOf(%q) = %q, want %q", name, got, want)
		}
	}
}
