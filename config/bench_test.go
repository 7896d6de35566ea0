package config

import (
	"bytes"
	"os"
	"testing"
)

func BenchmarkParseFull(b *testing.B) {
	src, err := os.ReadFile("testdata/full.toml")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(bytes.NewReader(src), "full.toml"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseChecklist(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := ParseChecklist(bytes.NewReader([]byte(ChecklistTemplate))); err != nil {
			b.Fatal(err)
		}
	}
}
