package packaging

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestReleaseTarget: `make release` (mk/dist.mk), read with `make -n`
// without building anything, builds every board's static binary and every
// .deb into one fresh directory, writes a SHA256SUMS with names relative
// to it covering both, and checks it there with `sha256sum -c`.
func TestReleaseTarget(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	const dir = "/nonexistent/vigil-release"
	cmd := exec.Command("make", "-n", "release", "RELEASE_DIR="+dir)
	cmd.Dir = ".."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make -n release: %v\n%s", err, out)
	}
	plan := string(out)
	mf := string(readFile(t, "../Makefile"))
	targets := regexp.MustCompile(`(?m)^TARGETS := (.*)$`).FindStringSubmatch(mf)
	if targets == nil {
		t.Fatal("no TARGETS in the Makefile")
	}
	dm := string(readFile(t, "../mk/dist.mk"))
	debs := regexp.MustCompile(`(?m)^DEB_TARGETS := (.*)$`).FindStringSubmatch(dm)
	if debs == nil {
		t.Fatal("no DEB_TARGETS in mk/dist.mk")
	}
	want := []string{
		"rm -rf " + dir,
		"for t in " + targets[1] + "; do",
		"out=" + dir + "/vigil-linux-$name",
		"for t in " + debs[1] + "; do",
		"--target " + dir + "/",
		"cd " + dir + " && sha256sum vigil-linux-* vigil_*.deb > SHA256SUMS",
		"cd " + dir + " && sha256sum -c --quiet SHA256SUMS",
	}
	at := 0
	for _, w := range want {
		i := strings.Index(plan[at:], w)
		if i < 0 {
			t.Fatalf("make -n release does not run %q (after what came before); it runs:\n%s", w, plan)
		}
		at += i + len(w)
	}
	if len(strings.Fields(targets[1])) < 5 || len(strings.Fields(debs[1])) < 4 {
		t.Errorf("TARGETS %q, DEB_TARGETS %q: fewer boards than arm6, arm7, arm64, riscv64, amd64", targets[1], debs[1])
	}
}
