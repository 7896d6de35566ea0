package board

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDetect(t *testing.T) {
	tests := []struct {
		tree   string // under testdata/
		want   string
		wantOK bool
	}{
		{"rpi-zero", "rpi-zero", true},              // Raspberry Pi Zero Rev 1.3
		{"rpi-zero-w", "rpi-zero", true},            // Raspberry Pi Zero W Rev 1.1
		{"rpi-zero2w", "rpi-zero2w", true},          // Raspberry Pi Zero 2 W Rev 1.0
		{"rpi1b", "rpi1", true},                     // Raspberry Pi Model B Rev 2
		{"rpi2", "rpi2", true},                      // Raspberry Pi 2 Model B Rev 1.1
		{"rpi3b", "rpi3", true},                     // Raspberry Pi 3 Model B Rev 1.2
		{"rpi3bplus", "rpi3", true},                 // Raspberry Pi 3 Model B Plus Rev 1.3
		{"rpi4", "rpi4", true},                      // Raspberry Pi 4 Model B Rev 1.4
		{"rpi400", "rpi4", true},                    // Raspberry Pi 400 Rev 1.0
		{"cm4", "rpi-cm4", true},                    // Raspberry Pi Compute Module 4 Rev 1.0
		{"rpi5", "rpi5", true},                      // Raspberry Pi 5 Model B Rev 1.0
		{"cm5", "rpi5", true},                       // Raspberry Pi Compute Module 5 Rev 1.0
		{"visionfive2", "visionfive2", true},        // StarFive VisionFive 2 v1.3B
		{"visionfive2-vendor", "visionfive2", true}, // StarFive VisionFive V2
		{"milkv-duo", "milkv-duo", true},            // Milk-V Duo
		{"milkv-duo256m", "milkv-duo", true},        // Milk-V Duo256M
		{"milkv-mars", "milkv-mars", true},          // Milk-V Mars
		{"rpi4-uefi", "rpi4", true},                 // DMI only: Raspberry Pi 4 Model B
		{"rockpro64", "generic", false},             // a device tree, but not a board we know
		{"x86", "generic", false},                   // DMI: Standard PC (Q35 + ICH9, 2009)
		{"empty", "generic", false},                 // neither file
		{"does-not-exist", "generic", false},
	}
	for _, tt := range tests {
		t.Run(tt.tree, func(t *testing.T) {
			p, ok := Detect(filepath.Join("testdata", tt.tree))
			if p.Name != tt.want || ok != tt.wantOK {
				t.Errorf("Detect(%q) = %q, %v, want %q, %v", tt.tree, p.Name, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestModel(t *testing.T) {
	tests := []struct{ tree, want string }{
		{"rpi4", "Raspberry Pi 4 Model B Rev 1.4"}, // NUL terminator dropped
		{"x86", "Standard PC (Q35 + ICH9, 2009)"},  // newline dropped
		{"empty", ""},
	}
	for _, tt := range tests {
		if got := Model(filepath.Join("testdata", tt.tree)); got != tt.want {
			t.Errorf("Model(%q) = %q, want %q", tt.tree, got, tt.want)
		}
	}
}

// TestDetectDeviceTreeWins checks that a device tree beats DMI when a
// machine has both (UEFI on an ARM board that also passes a device tree).
func TestDetectDeviceTreeWins(t *testing.T) {
	root := t.TempDir()
	write(t, root, "proc/device-tree/model", "Raspberry Pi 5 Model B Rev 1.0\x00")
	write(t, root, "sys/class/dmi/id/product_name", "Raspberry Pi 4 Model B\n")
	if p, ok := Detect(root); p.Name != "rpi5" || !ok {
		t.Errorf("Detect = %q, %v, want rpi5, true", p.Name, ok)
	}
	// An unknown device tree falls through to DMI.
	write(t, root, "proc/device-tree/model", "Some Vendor Board\x00")
	if p, ok := Detect(root); p.Name != "rpi4" || !ok {
		t.Errorf("Detect = %q, %v, want rpi4, true", p.Name, ok)
	}
}

func write(t *testing.T, root, name, content string) {
	t.Helper()
	p := filepath.Join(root, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestProfiles(t *testing.T) {
	want := []string{"rpi-zero", "rpi-zero2w", "rpi3", "rpi4", "rpi5", "rpi-cm4", "visionfive2", "milkv-duo", "milkv-mars", "generic", "sim"}
	for _, name := range want {
		if _, ok := Lookup(name); !ok {
			t.Errorf("Lookup(%q) not found", name)
		}
	}
	if _, ok := Lookup("auto"); ok {
		t.Error(`Lookup("auto") found a profile; "auto" is resolved by Detect`)
	}
	seen := map[string]bool{}
	for _, p := range Profiles() {
		if seen[p.Name] {
			t.Errorf("profile %q listed twice", p.Name)
		}
		seen[p.Name] = true
		if p.Description == "" {
			t.Errorf("profile %q has no description", p.Name)
		}
		if p.GOARCH == "arm" && p.GOARM == "" {
			t.Errorf("profile %q: GOARCH=arm without GOARM", p.Name)
		}
		if p.GOARCH != "arm" && p.GOARM != "" {
			t.Errorf("profile %q: GOARM=%s without GOARCH=arm", p.Name, p.GOARM)
		}
		for _, port := range p.SPIPorts {
			if b, c, ok := strings.Cut(port, "."); !ok || b == "" || c == "" {
				t.Errorf("profile %q: SPI port %q is not bus.cs", p.Name, port)
			}
		}
		if p.Name != "sim" && p.EnableI2C == "" {
			t.Errorf("profile %q says nothing about enabling I²C", p.Name)
		}
	}
	// The Pi Zero and Pi 1 need ARMv6: a GOARM=7 binary dies with SIGILL there.
	for _, name := range []string{"rpi-zero", "rpi1"} {
		if p, _ := Lookup(name); p.GOARCH != "arm" || p.GOARM != "6" {
			t.Errorf("%s: GOARCH=%s GOARM=%s, want arm 6", name, p.GOARCH, p.GOARM)
		}
	}
	if p, _ := Lookup("rpi4"); p.I2CBus != "1" {
		t.Errorf("rpi4 I2CBus = %q, want 1 (Open(\"\") would pick bus 0 or 20)", p.I2CBus)
	}
}

// TestProfilesAreCopies checks a caller cannot change the table.
func TestProfilesAreCopies(t *testing.T) {
	p, _ := Lookup("rpi4")
	p.SPIPorts[0] = "9.9"
	p.Models[0] = "x"
	if q, _ := Lookup("rpi4"); q.SPIPorts[0] != "0.0" || q.Models[0] != "Raspberry Pi 4" {
		t.Errorf("Lookup returned the table's own slices: %v %v", q.SPIPorts, q.Models)
	}
}

func TestDetected(t *testing.T) {
	tests := []struct{ tree, want, how string }{
		{"rpi4", "rpi4", `device-tree model "Raspberry Pi 4 Model B Rev 1.4" (/proc/device-tree/model)`},
		{"rpi4-uefi", "rpi4", `DMI product name "Raspberry Pi 4 Model B"`},
		{"rockpro64", "generic", "is not a board vigil knows: the generic Linux profile"},
		{"empty", "generic", "no device-tree model or DMI product name"},
	}
	for _, tt := range tests {
		p, how := Detected(filepath.Join("testdata", tt.tree))
		if p.Name != tt.want || !strings.Contains(how, tt.how) {
			t.Errorf("Detected(%q) = %q, %q, want %q, %q", tt.tree, p.Name, how, tt.want, tt.how)
		}
	}
}

// Every board with a 1-Wire directory says how to turn 1-Wire on.
func TestEnableW1(t *testing.T) {
	for _, p := range Profiles() {
		if p.W1Dir != "" && p.EnableW1 == "" {
			t.Errorf("profile %s has a W1Dir but no EnableW1", p.Name)
		}
	}
	if p, _ := Lookup("rpi4"); !strings.Contains(p.EnableW1, "dtoverlay=w1-gpio") {
		t.Errorf("rpi4 EnableW1 = %q, want dtoverlay=w1-gpio", p.EnableW1)
	}
}
