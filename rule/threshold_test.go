package rule

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestThresholds(t *testing.T) {
	tests := []struct {
		src  string
		want []Threshold
	}{
		{"air.temperature > 35", []Threshold{{"air.temperature", ">", 35}}},
		{"10 >= soil.moisture", []Threshold{{"soil.moisture", "<=", 10}}},
		{"air.temperature > 35 or air.humidity < 20.5", []Threshold{{"air.temperature", ">", 35}, {"air.humidity", "<", 20.5}}},
		{"delta(air.temperature, 10m) > 3", nil},
		{"abs(air.temperature) > 3", nil},
		{"air.temperature > air.humidity", nil},
		{"stale(air) > 5m", nil},
	}
	for _, tt := range tests {
		got := MustCompile(tt.src).Thresholds()
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Thresholds(%q) mismatch (-want +got):\n%s", tt.src, diff)
		}
	}
}
