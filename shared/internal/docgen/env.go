package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// envName is what an environment variable's name looks like; a name ending
// in "_" is a prefix (RPC_URL_<chainId>).
var envName = regexp.MustCompile(`^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*_?$`)

// scanEnv finds every environment variable the server's code reads: the
// non-test Go files of shared/ and functions/ (the SDKs and infra/ have
// their own documents). A name counts when it is a string literal passed
// first to a function whose name mentions env (os.Getenv, os.LookupEnv,
// the packages' env helpers), the value of a constant whose name mentions
// Env, or a literal with an underscore inside a function whose name
// mentions Env (a table of names read in a loop, a prefix matched against
// os.Environ), and the two variables of each queue package work declares
// (the Env field of a work.Queue literal, in package work or a group's:
// <Env>_QUEUE_URL, <Env>_QUEUE_NAME). It answers each name with the
// directories that read it.
func scanEnv(root string) (map[string][]string, error) {
	found := map[string][]string{}
	add := func(name, dir string) {
		if !slices.Contains(found[name], dir) {
			found[name] = append(found[name], dir)
		}
	}
	fset := token.NewFileSet()
	for _, top := range []string{"shared", "functions"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if n := d.Name(); n == "testdata" || n == "node_modules" || strings.HasPrefix(n, ".") {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(root, filepath.Dir(path))
			if err != nil {
				return err
			}
			for _, name := range envReads(f) {
				add(name, filepath.ToSlash(rel))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	for _, dirs := range found {
		slices.Sort(dirs)
	}
	return found, nil
}

// isQueueType reports whether a composite literal's type is work.Queue:
// Queue inside package work, work.Queue in a group's package.
func isQueueType(e ast.Expr) bool {
	switch t := e.(type) {
	case *ast.Ident:
		return t.Name == "Queue"
	case *ast.SelectorExpr:
		pkg, ok := t.X.(*ast.Ident)
		return ok && pkg.Name == "work" && t.Sel.Name == "Queue"
	}
	return false
}

// envReads is the variable names one file reads, by the rules of scanEnv.
func envReads(f *ast.File) []string {
	var names []string
	lit := func(e ast.Expr) {
		if bl, ok := e.(*ast.BasicLit); ok && bl.Kind == token.STRING {
			if s, err := strconv.Unquote(bl.Value); err == nil && envName.MatchString(s) {
				names = append(names, s)
			}
		}
	}
	mentionsEnv := func(name string) bool { return strings.Contains(strings.ToLower(name), "env") }
	ast.Inspect(f, func(n ast.Node) bool {
		cl, ok := n.(*ast.CompositeLit)
		if !ok {
			return true
		}
		if !isQueueType(cl.Type) {
			return true
		}
		fields := map[string]string{}
		for _, e := range cl.Elts {
			kv, ok := e.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			key, named := kv.Key.(*ast.Ident)
			bl, isLit := kv.Value.(*ast.BasicLit)
			if named && isLit && bl.Kind == token.STRING {
				fields[key.Name], _ = strconv.Unquote(bl.Value)
			}
		}
		if prefix := fields["Env"]; envName.MatchString(prefix) {
			names = append(names, prefix+"_QUEUE_URL", prefix+"_QUEUE_NAME")
			declaredQueues[prefix+"_QUEUE_URL"] = setting{"", "the `" + fields["Name"] + "` queue; on Lambda only the URL counts"}
			declaredQueues[prefix+"_QUEUE_NAME"] = setting{"`platform-api-" + fields["Name"] + "`", "the `" + fields["Name"] + "` queue by name"}
		}
		return true
	})
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.GenDecl:
			if d.Tok != token.CONST {
				continue
			}
			for _, spec := range d.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if strings.Contains(n.Name, "Env") && i < len(vs.Values) {
						lit(vs.Values[i])
					}
				}
			}
		case *ast.FuncDecl:
			if d.Body == nil {
				continue
			}
			inEnvFunc := strings.Contains(d.Name.Name, "Env")
			ast.Inspect(d.Body, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.CallExpr:
					var callee string
					switch fn := x.Fun.(type) {
					case *ast.Ident:
						callee = fn.Name
					case *ast.SelectorExpr:
						callee = fn.Sel.Name
					}
					if mentionsEnv(callee) && len(x.Args) > 0 {
						lit(x.Args[0])
					}
				case *ast.BasicLit:
					if inEnvFunc && strings.Contains(x.Value, "_") {
						lit(x)
					}
				}
				return true
			})
		}
	}
	return names
}

// declaredQueues describes the variables of the queues the scan found
// declared, for those settings has no words of its own.
var declaredQueues = map[string]setting{}

// envFragment is the configuration table: every variable scanEnv finds,
// with its default and meaning from settings. A variable read without an
// entry there, or an entry no code reads any more, fails the generator.
func envFragment(root string) (string, error) {
	found, err := scanEnv(root)
	if err != nil {
		return "", err
	}
	var missing, stale []string
	for name := range found {
		if _, ok := settings[name]; ok {
			continue
		}
		if s, ok := declaredQueues[name]; ok {
			settings[name] = s
			continue
		}
		missing = append(missing, name)
	}
	for name := range settings {
		if _, ok := found[name]; !ok {
			stale = append(stale, name)
		}
	}
	slices.Sort(missing)
	slices.Sort(stale)
	if len(missing) > 0 || len(stale) > 0 {
		return "", fmt.Errorf("environment variables read but not described in shared/internal/docgen/settings.go: %v; described but read nowhere: %v", missing, stale)
	}
	var b strings.Builder
	b.WriteString("| variable | default | meaning | read in |\n|---|---|---|---|\n")
	for _, name := range slices.Sorted(maps.Keys(found)) {
		s := settings[name]
		shown := "`" + name + "`"
		if strings.HasSuffix(name, "_") {
			shown = "`" + name + "<chainId>`"
		}
		def := s.def
		if def == "" {
			def = "—"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | `%s` |\n", shown, cell(def), cell(s.meaning), strings.Join(found[name], "`, `"))
	}
	return b.String(), nil
}
