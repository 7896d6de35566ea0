package main

import "testing"

// bench -only usual splices its section and summary rows into an earlier
// report: replacing its own from an earlier run, adding them otherwise.
func TestSpliceUsual(t *testing.T) {
	doc := "# r\n\n## Summary against the targets of issue 11\n\n| figure | m |\n| --- | --- |\n| a | 1 |\n\n## CPU\n\ntext\n\n## What the memory figures mean\n\nend\n"
	sec := "## " + usualHeading + "\n\nnew\n\n"
	once := spliceRow(spliceSection(doc, "## "+usualHeading+"\n", "## What the memory figures mean\n", sec), "## Summary against the targets of issue 11\n", []string{"b", "2"})
	want := "# r\n\n## Summary against the targets of issue 11\n\n| figure | m |\n| --- | --- |\n| a | 1 |\n| b | 2 |\n\n## CPU\n\ntext\n\n" + sec + "## What the memory figures mean\n\nend\n"
	if once != want {
		t.Fatalf("first splice:\n%s\nwant:\n%s", once, want)
	}
	sec2 := "## " + usualHeading + "\n\nnewer\n\n"
	twice := spliceRow(spliceSection(once, "## "+usualHeading+"\n", "## What the memory figures mean\n", sec2), "## Summary against the targets of issue 11\n", []string{"b", "3"})
	want2 := "# r\n\n## Summary against the targets of issue 11\n\n| figure | m |\n| --- | --- |\n| a | 1 |\n| b | 3 |\n\n## CPU\n\ntext\n\n" + sec2 + "## What the memory figures mean\n\nend\n"
	if twice != want2 {
		t.Fatalf("second splice:\n%s\nwant:\n%s", twice, want2)
	}
}
