package daemon

import (
	"slices"
	"testing"
)

func TestPageHosts(t *testing.T) {
	tests := []struct {
		host    string
		allowed []string
		want    []string
	}{
		{"greenhouse", nil, []string{"greenhouse", "greenhouse.local"}},
		{"Greenhouse.lan.", []string{"vigil.example"}, []string{"greenhouse", "greenhouse.lan", "greenhouse.local", "vigil.example"}},
		{"", []string{"vigil.example"}, []string{"vigil.example"}},
	}
	for _, tt := range tests {
		if got := pageHosts(tt.host, tt.allowed); !slices.Equal(got, tt.want) {
			t.Errorf("pageHosts(%q, %q) = %q, want %q", tt.host, tt.allowed, got, tt.want)
		}
	}
}
