package jsonint64

import (
	"encoding/json"
	"testing"
	"time"
)

type inner struct {
	PID   int64 `json:"producerId"`
	Epoch int16 `json:"epoch"`
}

type named int64

type doc struct {
	inner
	Offset  *int64           `json:"offset"`
	None    *int64           `json:"none"`
	List    []int64          `json:"list"`
	Named   named            `json:"named"`
	Skip    int64            `json:"-"`
	Omit    int64            `json:"omit,omitempty"`
	Kept    int64            `json:"kept,omitempty"`
	Raw     []byte           `json:"raw"`
	U       uint64           `json:"u"`
	M       map[string]int64 `json:"m"`
	When    time.Time        `json:"when"`
	Any     any              `json:"any"`
	NilList []int64          `json:"nilList"`
	Sub     *inner           `json:"sub"`
	Plain   int64
	private int64
}

func TestStrings(t *testing.T) {
	off := int64(9007199254740993) // 2^53+1: a double rounds it
	d := doc{inner: inner{PID: 4692485416233264874, Epoch: 2}, Offset: &off, List: []int64{1, -2},
		Named: 7, Skip: 1, Kept: 3, Raw: []byte{1, 2}, U: 5, M: map[string]int64{"a": 1},
		When: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), Any: int64(8), Sub: &inner{PID: 1}, Plain: 4, private: 1}
	got, err := json.Marshal(Strings(d))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"producerId":"4692485416233264874","epoch":2,"offset":"9007199254740993","none":null,` +
		`"list":["1","-2"],"named":"7","kept":"3","raw":"AQI=","u":5,"m":{"a":"1"},` +
		`"when":"2026-12-01T00:00:00Z","any":"8","nilList":null,"sub":{"producerId":"1","epoch":0},"Plain":"4"}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// Without int64s the member names and order are encoding/json's own.
	plain, _ := json.Marshal(d)
	var a, b map[string]any
	json.Unmarshal(plain, &a)
	json.Unmarshal(got, &b)
	if len(a) != len(b) {
		t.Errorf("members: %d from encoding/json, %d from Strings", len(a), len(b))
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			t.Errorf("member %q missing", k)
		}
	}
}
