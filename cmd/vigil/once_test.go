package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// parseDir parses the non-test Go files of dir (relative to the module).
func parseDir(t *testing.T, dir string) []*ast.File {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join("..", "..", dir))
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join("..", "..", dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// ourPackages lists every directory of the module with Go files, tests
// and internal/ left out.
func ourPackages(t *testing.T) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(filepath.Join("..", ".."), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(filepath.Join("..", ".."), path)
		if d.IsDir() {
			if rel == "." {
				return nil
			}
			if strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || rel == "internal" {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") && !slices.Contains(dirs, filepath.Dir(rel)) {
			dirs = append(dirs, filepath.Dir(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// TestRoleInterfacesDeclaredOnce: a role the daemon plays for a channel
// (check, pause, the settings, ack, ...) is declared once, where the
// channels use it, not once per channel: no two packages declare an
// interface with the same methods.
func TestRoleInterfacesDeclaredOnce(t *testing.T) {
	seen := map[string]string{} // method set -> pkg.Type
	for _, dir := range []string{"transport", "transport/mqtt", "transport/telegram", "web", "daemon", "heartbeat", "agent"} {
		for _, f := range parseDir(t, dir) {
			ast.Inspect(f, func(n ast.Node) bool {
				ts, ok := n.(*ast.TypeSpec)
				if !ok {
					return true
				}
				it, ok := ts.Type.(*ast.InterfaceType)
				if !ok {
					return false
				}
				var methods []string
				for _, m := range it.Methods.List {
					for _, name := range m.Names {
						methods = append(methods, name.Name)
					}
				}
				if len(methods) == 0 {
					return false
				}
				slices.Sort(methods)
				key := strings.Join(methods, ",")
				where := dir + "." + ts.Name.Name
				if other, ok := seen[key]; ok && !strings.HasPrefix(other, dir+".") {
					t.Errorf("%s and %s declare the same role (%s)", other, where, key)
				}
				seen[key] = where
				return false
			})
		}
	}
}

// TestErrNotAllowedDeclaredOnce: a refusal of who asked is one error
// value, which every side (manage's checks, the daemon, the transports,
// the socket's code) names; nothing translates between two.
func TestErrNotAllowedDeclaredOnce(t *testing.T) {
	var where []string
	for _, dir := range ourPackages(t) {
		for _, f := range parseDir(t, dir) {
			for _, d := range f.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok || g.Tok != token.VAR {
					continue
				}
				for _, s := range g.Specs {
					for _, n := range s.(*ast.ValueSpec).Names {
						if n.Name == "ErrNotAllowed" {
							where = append(where, dir)
						}
					}
				}
			}
		}
	}
	if len(where) != 1 {
		t.Errorf("ErrNotAllowed is declared in %v, want one package", where)
	}
}

// TestOneValidationOfASet: the command line validates no setting itself;
// a set, with a daemon or without, is validated by the one path that
// stores it (manage's Check, called by the daemon's commands).
func TestOneValidationOfASet(t *testing.T) {
	for _, f := range parseDir(t, "cmd/vigil") {
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			x, _ := sel.X.(*ast.Ident)
			if sel.Sel.Name == "CheckSettable" || sel.Sel.Name == "CheckRemoteSet" || sel.Sel.Name == "CheckModelSet" || (sel.Sel.Name == "With" && x != nil && x.Name == "base") {
				t.Errorf("cmd/vigil calls %s: a set is validated by the one path that stores it", sel.Sel.Name)
			}
			return true
		})
	}
}

// TestCommandsNamesOneThing: "Commands" names no type at all: the
// daemon's command handler, the roles each transport calls and the fake
// of the tests each have a name that says what they are.
func TestCommandsNamesOneThing(t *testing.T) {
	for _, dir := range append(ourPackages(t), "internal/transporttest") {
		for _, f := range parseDir(t, dir) {
			ast.Inspect(f, func(n ast.Node) bool {
				if ts, ok := n.(*ast.TypeSpec); ok && ts.Name.Name == "Commands" {
					t.Errorf("%s declares a type Commands", dir)
				}
				return true
			})
		}
	}
}
