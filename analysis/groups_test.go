package analysis

import "testing"

func TestPartitionRanges(t *testing.T) {
	for _, c := range []struct {
		in   []int32
		want string
	}{
		{nil, ""},
		{[]int32{4}, "4"},
		{[]int32{0, 1}, "0,1"},
		{[]int32{0, 1, 2, 3, 7}, "0-3,7"},
		{[]int32{1, 3, 4, 5, 9, 10}, "1,3-5,9,10"},
	} {
		if got := PartitionRanges(c.in); got != c.want {
			t.Errorf("PartitionRanges(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}
