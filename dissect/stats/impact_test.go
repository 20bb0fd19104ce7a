package stats

import "testing"

func TestLostImpact(t *testing.T) {
	r := &Range{Min: 3, Max: 9}
	for _, c := range []struct {
		lost  []int16
		after *Range
		want  string
		text  string
	}{
		{[]int16{10, 11}, r, ImpactNegotiateDown, "will negotiate down to v9"},
		{[]int16{1, 10}, r, ImpactVersionRemoved, "version removed: needs v3 or later"},
		{[]int16{2}, nil, ImpactAPIRemoved, "API removed"},
	} {
		got := LostImpact(c.lost, c.after)
		if got != c.want || ImpactText(got, c.after) != c.text {
			t.Errorf("%v against %v: %s %q, want %s %q", c.lost, c.after, got, ImpactText(got, c.after), c.want, c.text)
		}
	}
}
