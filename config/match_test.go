package config

import (
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The regexps the matchers in match.go replace. Tests may import regexp: they
// are not part of the binary.
var (
	idRE         = regexp.MustCompile(`^[a-z0-9_-]{1,64}$`)
	boardRE      = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)
	sensorNameRE = regexp.MustCompile(`^[a-z0-9_]{1,32}$`)
	ruleNameRE   = regexp.MustCompile(`^[a-z0-9_]{1,64}$`)
	quantityRE   = regexp.MustCompile(`^[a-z0-9_]{1,32}$`)
	envRE        = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	busRE        = regexp.MustCompile(`^[A-Za-z0-9_./-]{1,64}$`)
	spiBusRE     = regexp.MustCompile(`^spi:([0-9]{1,3})\.([0-9]{1,3})$`)
	serialRE     = regexp.MustCompile(`^[0-9a-f]{2}-[0-9a-f]{12}$`)
	lastKeyRE    = regexp.MustCompile(`^toml: (?:line \d+ )?\(last key ("(?:[^"\\]|\\.)*")\): (.*)$`)
	badTypeRE    = regexp.MustCompile(`^incompatible types: TOML value has type (.+); destination has type (.+)$`)
	mismatchRE   = regexp.MustCompile(`^type mismatch for .+: expected table but found (.+)$`)
)

var boolMatchers = []struct {
	name string
	fn   func(string) bool
	re   *regexp.Regexp
}{
	{"validID", validID, idRE},
	{"validBoard", validBoard, boardRE},
	{"validSensorName", validSensorName, sensorNameRE},
	{"validRuleName", validRuleName, ruleNameRE},
	{"validQuantity", validQuantity, quantityRE},
	{"validEnvName", validEnvName, envRE},
	{"validBus", validBus, busRE},
	{"validSerial", validSerial, serialRE},
}

// checkMatchers fails t if any hand-written matcher disagrees with its regexp on s.
func checkMatchers(t testing.TB, s string) {
	t.Helper()
	for _, m := range boolMatchers {
		if got, want := m.fn(s), m.re.MatchString(s); got != want {
			t.Errorf("%s(%q) = %v, want %v", m.name, s, got, want)
		}
	}

	bus, cs, ok := spiBus(s)
	if m := spiBusRE.FindStringSubmatch(s); m == nil {
		if ok {
			t.Errorf("spiBus(%q) = %d, %d, true, want no match", s, bus, cs)
		}
	} else {
		wb, _ := strconv.Atoi(m[1])
		wc, _ := strconv.Atoi(m[2])
		if !ok || bus != wb || cs != wc {
			t.Errorf("spiBus(%q) = %d, %d, %v, want %d, %d, true", s, bus, cs, ok, wb, wc)
		}
	}

	quoted, msg, ok := lastKeyError(s)
	if m := lastKeyRE.FindStringSubmatch(s); m == nil {
		if ok {
			t.Errorf("lastKeyError(%q) = %q, %q, true, want no match", s, quoted, msg)
		}
	} else if !ok || quoted != m[1] || msg != m[2] {
		t.Errorf("lastKeyError(%q) = %q, %q, %v, want %q, %q, true", s, quoted, msg, ok, m[1], m[2])
	}

	have, wantType, ok := badTypeMessage(s)
	if m := badTypeRE.FindStringSubmatch(s); m == nil {
		if ok {
			t.Errorf("badTypeMessage(%q) = %q, %q, true, want no match", s, have, wantType)
		}
	} else if !ok || have != m[1] || wantType != m[2] {
		t.Errorf("badTypeMessage(%q) = %q, %q, %v, want %q, %q, true", s, have, wantType, ok, m[1], m[2])
	}

	found, ok := mismatchMessage(s)
	if m := mismatchRE.FindStringSubmatch(s); m == nil {
		if ok {
			t.Errorf("mismatchMessage(%q) = %q, true, want no match", s, found)
		}
	} else if !ok || found != m[1] {
		t.Errorf("mismatchMessage(%q) = %q, %v, want %q, true", s, found, ok, m[1])
	}
}

// fragments are the pieces random inputs are built from: every literal of
// the patterns plus characters at and around each class boundary.
var fragments = []string{
	"", "a", "z", "A", "Z", "0", "9", "_", "-", ".", "/", "f", "g", "@", "[", "`", "{", "}",
	" ", "\n", "\t", "\x00", "\x7f", "\xff", "\xc3", "é", "ß", "\u212a", "😀",
	"\"", "\\", "\\\"", "\\\n", "\\\\", "(", ")",
	"spi:", "spi:0.0", "spi:999.999", "1234",
	"28-", "0316a2794aff", "0316A2794AFF",
	"{air.t}", "{air", ".t}", "{a.b.c}",
	"toml: ", "line ", "line 12 ", "(last key \"", "(last key \"a.b\"): ", "\"): ", "): ",
	"incompatible types: TOML value has type ", "; destination has type ", "int64", "string",
	"type mismatch for ", ": expected table but found ", "config.Device",
	strings.Repeat("a", 31), strings.Repeat("a", 32), strings.Repeat("a", 63), strings.Repeat("a", 64),
}

// families are prefixes and pieces for each pattern with structure, so that
// random inputs get deep into each pattern.
var families = []struct{ prefixes, pieces []string }{
	{[]string{"spi:"}, []string{"0", "9", "123", ".", ":", "a", "\n", "٠"}},
	{[]string{"{"}, []string{"{", "}", ".", "a", "_", "0", "A", "-", "é", " "}},
	{
		[]string{"toml: ", "toml: line ", "toml: (last key \"", "toml: line 12 (last key \""},
		[]string{"line ", "1", " ", "(last key ", "(last key \"a.b\"): ", "\"", "\\", "\n", "): ", ")", "a", "é", "\xff"},
	},
	{
		[]string{"incompatible types: TOML value has type "},
		[]string{"; destination has type ", ";", " ", "a", "\n", "\xff"},
	},
	{
		[]string{"type mismatch for "},
		[]string{": expected table but found ", ":", " ", "a", "\n", "\xff"},
	},
}

// TestMatchersEqualRegexps compares every matcher with its regexp over
// strings near each length limit with every byte at each end and in the
// middle, over all short strings of boundary bytes, and over random
// concatenations of fragments.
func TestMatchersEqualRegexps(t *testing.T) {
	n := 0
	check := func(s string) {
		n++
		checkMatchers(t, s)
	}
	for _, l := range []int{1, 2, 3, 14, 15, 16, 31, 32, 33, 63, 64, 65, 100} {
		for c := range 256 {
			for _, pos := range []int{0, l / 2, l - 1} {
				for _, fill := range []byte{'a', 'A', '0', '_', '-'} {
					b := []byte(strings.Repeat(string(fill), l))
					b[pos] = byte(c)
					check(string(b))
				}
			}
		}
	}
	alphabet := []string{"a", "A", "0", "_", "-", ".", "{", "}", "\n", "é", "\xff", ":", "\""}
	var gen func(prefix string, depth int)
	gen = func(prefix string, depth int) {
		check(prefix)
		if depth == 0 {
			return
		}
		for _, a := range alphabet {
			gen(prefix+a, depth-1)
		}
	}
	gen("", 4)
	r := rand.New(rand.NewPCG(1, 2))
	for range 200_000 {
		var b strings.Builder
		for range r.IntN(9) {
			b.WriteString(fragments[r.IntN(len(fragments))])
		}
		check(b.String())
	}
	// Each family's pieces, mostly after its fixed prefix, so that inputs
	// get deep into each pattern.
	for _, fam := range families {
		for range 50_000 {
			var b strings.Builder
			if r.IntN(4) > 0 {
				b.WriteString(fam.prefixes[r.IntN(len(fam.prefixes))])
			}
			for range r.IntN(10) {
				b.WriteString(fam.pieces[r.IntN(len(fam.pieces))])
			}
			check(b.String())
		}
	}
	t.Logf("compared %d strings", n)
}

func FuzzMatchers(f *testing.F) {
	for _, s := range fragments {
		f.Add(s)
	}
	for _, s := range []string{
		"spi:0.12", "28-0316a2794aff", "temp {air.t} and {board.load1}",
		`toml: line 3 (last key "sensor.\"x\\\"y\""): bad`,
		"incompatible types: TOML value has type string; destination has type int64",
		"incompatible types: TOML value has type a; destination has type ; destination has type ",
		"type mismatch for config.Device: expected table but found int64",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkMatchers(t, s)
	})
}

func TestBoolMatchers(t *testing.T) {
	type tc struct {
		in   string
		want bool
	}
	a := strings.Repeat
	tests := []struct {
		name  string
		fn    func(string) bool
		cases []tc
	}{
		{"validID", validID, []tc{
			{"", false}, {"a", true}, {"pi-4_b0", true}, {"-", true}, {"_", true},
			{a("x", 64), true}, {a("x", 65), false},
			{"Pi", false}, {"a.b", false}, {"a b", false}, {"a/b", false}, {"émile", false}, {"a\n", false},
		}},
		{"validBoard", validBoard, []tc{
			{"", false}, {"a", true}, {"0", true}, {"pi4", true}, {"rpi-4_b", true},
			{"-a", false}, {"_a", false}, {a("x", 64), true}, {a("x", 65), false},
			{"Pi4", false}, {"pi.4", false}, {"pï", false}, {"pi\n", false},
		}},
		{"validSensorName", validSensorName, []tc{
			{"", false}, {"a", true}, {"air_1", true}, {"_", true},
			{a("x", 32), true}, {a("x", 33), false},
			{"Air", false}, {"air-1", false}, {"air.t", false}, {"aïr", false}, {"air\n", false},
		}},
		{"validRuleName", validRuleName, []tc{
			{"", false}, {"hot", true}, {"too_hot_2", true},
			{a("x", 64), true}, {a("x", 65), false},
			{"Hot", false}, {"too-hot", false}, {"too hot", false}, {"chaud·", false},
		}},
		{"validQuantity", validQuantity, []tc{
			{"", false}, {"temperature", true}, {"co2_ppm", true},
			{a("x", 32), true}, {a("x", 33), false},
			{"Temp", false}, {"rel-humidity", false}, {"°c", false},
		}},
		{"validEnvName", validEnvName, []tc{
			{"", false}, {"A", true}, {"_", true}, {"a", true}, {"VIGIL_TOKEN_2", true},
			{a("X", 1000), true}, {"2X", false}, {"-X", false}, {"X-Y", false}, {"X.Y", false},
			{"ÉTÉ", false}, {"X\n", false},
		}},
		{"validBus", validBus, []tc{
			{"", false}, {"1", true}, {"/dev/i2c-1", true}, {"I2C1.bus_0", true},
			{a("x", 64), true}, {a("x", 65), false},
			{"i2c 1", false}, {"i2c:1", false}, {"bus\\1", false}, {"büs", false}, {"1\n", false},
		}},
		{"validSerial", validSerial, []tc{
			{"", false}, {"28-0316a2794aff", true}, {"00-000000000000", true},
			{"28-0316A2794AFF", false}, {"28-0316a2794af", false}, {"28-0316a2794aff0", false},
			{"280316a2794aff", false}, {"28_0316a2794aff", false}, {"2g-0316a2794aff", false},
			{"28-0316a2794afé", false}, {"28-0316a2794aff\n", false},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, c := range tt.cases {
				if got := tt.fn(c.in); got != c.want {
					t.Errorf("%s(%q) = %v, want %v", tt.name, c.in, got, c.want)
				}
			}
		})
	}
}

func TestSPIBus(t *testing.T) {
	tests := []struct {
		in      string
		bus, cs int
		ok      bool
	}{
		{"spi:0.0", 0, 0, true},
		{"spi:0.1", 0, 1, true},
		{"spi:999.007", 999, 7, true},
		{"", 0, 0, false},
		{"spi:", 0, 0, false},
		{"spi:0", 0, 0, false},
		{"spi:0.", 0, 0, false},
		{"spi:.0", 0, 0, false},
		{"spi:1000.0", 0, 0, false},
		{"spi:0.1000", 0, 0, false},
		{"spi:0.0.0", 0, 0, false},
		{"spi:-1.0", 0, 0, false},
		{"spi:0,0", 0, 0, false},
		{"SPI:0.0", 0, 0, false},
		{"spi:٠.٠", 0, 0, false}, // Arabic-Indic digits
		{"spi:0.0\n", 0, 0, false},
		{" spi:0.0", 0, 0, false},
	}
	for _, tt := range tests {
		bus, cs, ok := spiBus(tt.in)
		if bus != tt.bus || cs != tt.cs || ok != tt.ok {
			t.Errorf("spiBus(%q) = %d, %d, %v, want %d, %d, %v", tt.in, bus, cs, ok, tt.bus, tt.cs, tt.ok)
		}
	}
}

func TestLastKeyError(t *testing.T) {
	tests := []struct {
		in          string
		quoted, msg string
		ok          bool
	}{
		{`toml: (last key "a.b"): bad`, `"a.b"`, "bad", true},
		{`toml: line 12 (last key "a"): `, `"a"`, "", true},
		{`toml: (last key "a\"b"): x): y`, `"a\"b"`, "x): y", true},
		{`toml: (last key "a\\"): m`, `"a\\"`, "m", true},
		{`toml: (last key ""): m`, `""`, "m", true},
		{"toml: (last key \"a\nb\"): m", "\"a\nb\"", "m", true},
		{"toml: (last key \"a\\\nb\"): m", "", "", false},
		{`toml: (last key "a\`, "", "", false},
		{`toml: (last key "a"): m` + "\n", "", "", false},
		{`toml: line (last key "a"): m`, "", "", false},
		{`toml: line x (last key "a"): m`, "", "", false},
		{`toml: line 1(last key "a"): m`, "", "", false},
		{`toml: (last key "a") m`, "", "", false},
		{`toml: (last key a): m`, "", "", false},
		{`toml:(last key "a"): m`, "", "", false},
		{"", "", "", false},
	}
	for _, tt := range tests {
		quoted, msg, ok := lastKeyError(tt.in)
		if quoted != tt.quoted || msg != tt.msg || ok != tt.ok {
			t.Errorf("lastKeyError(%q) = %q, %q, %v, want %q, %q, %v", tt.in, quoted, msg, ok, tt.quoted, tt.msg, tt.ok)
		}
	}
}

func TestTypeMessages(t *testing.T) {
	const bt = "incompatible types: TOML value has type "
	const dt = "; destination has type "
	bad := []struct {
		in         string
		have, want string
		ok         bool
	}{
		{bt + "string" + dt + "int64", "string", "int64", true},
		{bt + "a" + dt + "b" + dt + "c", "a" + dt + "b", "c", true},
		{bt + "a" + dt + "b" + dt, "a", "b" + dt, true},
		{bt + dt + "b", "", "", false},
		{bt + "a" + dt, "", "", false},
		{bt + "a" + dt + "b\n", "", "", false},
		{bt + "a", "", "", false},
		{"", "", "", false},
	}
	for _, tt := range bad {
		have, want, ok := badTypeMessage(tt.in)
		if have != tt.have || want != tt.want || ok != tt.ok {
			t.Errorf("badTypeMessage(%q) = %q, %q, %v, want %q, %q, %v", tt.in, have, want, ok, tt.have, tt.want, tt.ok)
		}
	}
	const mt = "type mismatch for "
	const et = ": expected table but found "
	mismatch := []struct {
		in    string
		found string
		ok    bool
	}{
		{mt + "config.Device" + et + "int64", "int64", true},
		{mt + "a" + et + "b" + et + "c", "c", true},
		{mt + "a" + et + "b" + et, "b" + et, true},
		{mt + et + "b", "", false},
		{mt + "a" + et, "", false},
		{mt + "a\n" + et + "b", "", false},
		{"", "", false},
	}
	for _, tt := range mismatch {
		found, ok := mismatchMessage(tt.in)
		if found != tt.found || ok != tt.ok {
			t.Errorf("mismatchMessage(%q) = %q, %v, want %q, %v", tt.in, found, ok, tt.found, tt.ok)
		}
	}
}
