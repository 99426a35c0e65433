package k8stest

import (
	"fmt"
	"go/ast"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// Where the platform reads its configuration: config.Load[T] fills T from its `env` struct tags
// (github.com/caarlos0/env), and app.Main(name, run) (services) and cli.Main(name, usage, run)
// (operator tools) load the config type of run that way. These and os.Getenv/os.LookupEnv are the
// only readers of the environment in the workspace.
const (
	configPkg = "ccplatform/pkg/config"
	appPkg    = "ccplatform/pkg/app"
	cliPkg    = "ccplatform/pkg/cli"
)

// envVar is one environment variable a binary reads.
type envVar struct {
	name string
	// optional: unset is fine, because the reader has an envDefault, or reads it with
	// os.Getenv/os.LookupEnv (and so handles unset itself).
	optional bool
	where    string // file:line of the first reader, for messages
	def      string // its envDefault, "" when it has none
}

// binary is one main package of the workspace: the Dockerfile builds each <module>/cmd/<name>
// into /usr/local/bin/<name>.
type binary struct {
	name       string
	importPath string
	env        map[string]envVar
	packages   map[string]bool // import paths of its workspace packages (its import closure)
}

// reads reports whether the binary reads the variable.
func (b *binary) reads(name string) bool {
	_, ok := b.env[name]
	return ok
}

// findBinaries lists every cmd/<name> main package of the workspace and what each reads.
func findBinaries(s *sourceTree) (map[string]*binary, error) {
	out := map[string]*binary{}
	for mod, dir := range s.modules {
		entries, err := os.ReadDir(filepath.Join(dir, "cmd"))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			b := &binary{name: e.Name(), importPath: mod + "/cmd/" + e.Name()}
			if err := s.readEnv(b); err != nil {
				return nil, fmt.Errorf("%s: %w", b.importPath, err)
			}
			if _, dup := out[b.name]; dup {
				return nil, fmt.Errorf("two binaries named %s", b.name)
			}
			out[b.name] = b
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no cmd/<name> package in the workspace")
	}
	return out, nil
}

// readEnv fills b.env: the `env` tags of every config type the binary loads (following nested
// and embedded structs and envPrefix, as caarlos0/env does), and the literal names passed to
// os.Getenv and os.LookupEnv, anywhere in the binary's workspace packages.
func (s *sourceTree) readEnv(b *binary) error {
	pkgs, err := s.closure(b.importPath)
	if err != nil {
		return err
	}
	b.env = map[string]envVar{}
	b.packages = map[string]bool{}
	roots := 0
	for _, p := range pkgs {
		b.packages[p.importPath] = true
		for _, f := range p.files {
			imports, err := s.imports(f)
			if err != nil {
				return err
			}
			for _, decl := range f.Decls {
				fd, ok := decl.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				n, err := s.readEnvIn(b, p, f, imports, fd)
				if err != nil {
					return err
				}
				roots += n
			}
		}
	}
	if roots == 0 {
		return fmt.Errorf("loads no configuration (no config.Load[T], app.Main or cli.Main): the test cannot tell what it reads")
	}
	return nil
}

// readEnvIn reads the environment reads in one function's body and returns how many config
// types it loads.
func (s *sourceTree) readEnvIn(b *binary, p *goPackage, f *ast.File, imports map[string]string, fd *ast.FuncDecl) (int, error) {
	// config.Load[T] inside a generic function (pkg/app's Run) loads its caller's type: that
	// comes in through app.Main below.
	typeParams := map[string]bool{}
	if fd.Type.TypeParams != nil {
		for _, field := range fd.Type.TypeParams.List {
			for _, n := range field.Names {
				typeParams[n.Name] = true
			}
		}
	}
	roots := 0
	var walkErr error
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || walkErr != nil {
			return walkErr == nil
		}
		switch fun := call.Fun.(type) {
		case *ast.IndexExpr: // config.Load[T]()
			if sel, ok := fun.X.(*ast.SelectorExpr); ok && refersTo(imports, sel, configPkg, "Load") {
				if id, ok := fun.Index.(*ast.Ident); ok && typeParams[id.Name] {
					return true
				}
				roots++
				walkErr = s.collect(b, p, f, fun.Index, "")
			}
		case *ast.SelectorExpr:
			switch {
			case (refersTo(imports, fun, appPkg, "Main") || refersTo(imports, fun, appPkg, "Run")) && len(call.Args) == 2,
				refersTo(imports, fun, cliPkg, "Main") && len(call.Args) == 3:
				// app.Main(name, run), cli.Main(name, usage, run): run (the last argument) has the
				// config type as its second parameter.
				id, ok := call.Args[len(call.Args)-1].(*ast.Ident)
				if !ok {
					walkErr = fmt.Errorf("%s: Main's run is not a function name", s.fset.Position(call.Pos()))
					return false
				}
				run, rf := p.funcDecl(id.Name)
				if run == nil {
					walkErr = fmt.Errorf("%s: no func %s", s.fset.Position(call.Pos()), id.Name)
					return false
				}
				cfg := nthParamType(run.Type, 1)
				if cfg == nil {
					walkErr = fmt.Errorf("%s: %s has no config parameter", s.fset.Position(run.Pos()), id.Name)
					return false
				}
				roots++
				walkErr = s.collect(b, p, rf, cfg, "")
			case refersTo(imports, fun, "os", "Getenv") || refersTo(imports, fun, "os", "LookupEnv"):
				if lit, ok := call.Args[0].(*ast.BasicLit); ok {
					name, err := strconv.Unquote(lit.Value)
					if err != nil {
						walkErr = err
						return false
					}
					b.add(envVar{name: name, optional: true, where: s.where(lit)})
				}
			}
		}
		return walkErr == nil
	})
	return roots, walkErr
}

// collect adds the variables of config type expr (in file f of package p) under prefix.
func (s *sourceTree) collect(b *binary, p *goPackage, f *ast.File, expr ast.Expr, prefix string) error {
	switch e := expr.(type) {
	case *ast.StarExpr:
		return s.collect(b, p, f, e.X, prefix)
	case *ast.Ident:
		spec, file := p.typeSpec(e.Name)
		if spec == nil {
			return nil // a predeclared type (string, int, ...): not a struct
		}
		return s.collectStruct(b, p, file, spec, prefix)
	case *ast.SelectorExpr:
		pkgName, ok := e.X.(*ast.Ident)
		if !ok {
			return nil
		}
		imports, err := s.imports(f)
		if err != nil {
			return err
		}
		importPath := imports[pkgName.Name]
		if !s.isLocal(importPath) {
			return nil // time.Duration and the like: values, not config structs
		}
		q, err := s.load(importPath)
		if err != nil {
			return err
		}
		spec, file := q.typeSpec(e.Sel.Name)
		if spec == nil {
			return fmt.Errorf("%s: no type %s.%s", s.where(e), importPath, e.Sel.Name)
		}
		return s.collectStruct(b, q, file, spec, prefix)
	}
	return nil // slices, maps, funcs: leaves without an env tag are not read
}

// collectStruct walks a struct type's fields as caarlos0/env does: a field with an `env` tag is a
// variable (prefix + its name); an exported field without one whose type is a struct is parsed
// field by field, under prefix + its `envPrefix`.
func (s *sourceTree) collectStruct(b *binary, p *goPackage, f *ast.File, spec *ast.TypeSpec, prefix string) error {
	st, ok := spec.Type.(*ast.StructType)
	if !ok {
		return nil
	}
	for _, field := range st.Fields.List {
		var tag reflect.StructTag
		if field.Tag != nil {
			raw, err := strconv.Unquote(field.Tag.Value)
			if err != nil {
				return err
			}
			tag = reflect.StructTag(raw)
		}
		if !exported(field) {
			continue // env cannot set it
		}
		if env, ok := tag.Lookup("env"); ok {
			name, _, _ := strings.Cut(env, ",")
			if name == "-" {
				continue
			}
			if name != "" {
				def, hasDefault := tag.Lookup("envDefault")
				b.add(envVar{name: prefix + name, optional: hasDefault, where: s.where(field), def: def})
				continue
			}
		}
		if err := s.collect(b, p, f, field.Type, prefix+tag.Get("envPrefix")); err != nil {
			return err
		}
	}
	return nil
}

// add records a read. A variable read in several places is optional only if every reader has a
// default: INTERNAL_TOKEN has one in config.Common but none in app.Process, which refuses to
// start a deployment without it.
func (b *binary) add(v envVar) {
	if old, ok := b.env[v.name]; ok {
		old.optional = old.optional && v.optional
		b.env[v.name] = old
		return
	}
	b.env[v.name] = v
}

// required lists the variables the binary reads that have no default, minus those whose absence
// it handles (optionalEnv), sorted.
func (b *binary) required() []string {
	var out []string
	for name, v := range b.env {
		if !v.optional && optionalEnv(b.name, name) == "" {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

func (s *sourceTree) where(n ast.Node) string {
	pos := s.fset.Position(n.Pos())
	return fmt.Sprintf("%s:%d", filepath.Base(pos.Filename), pos.Line)
}

// refersTo reports whether sel is pkgPath.name in a file with these imports.
func refersTo(imports map[string]string, sel *ast.SelectorExpr, pkgPath, name string) bool {
	id, ok := sel.X.(*ast.Ident)
	return ok && sel.Sel.Name == name && imports[id.Name] == pkgPath
}

// nthParamType is the type of a function's i-th parameter (counting names, not fields).
func nthParamType(ft *ast.FuncType, i int) ast.Expr {
	n := 0
	for _, field := range ft.Params.List {
		names := max(len(field.Names), 1)
		if i < n+names {
			return field.Type
		}
		n += names
	}
	return nil
}

// exported reports whether a struct field can be set by env: an exported name, or an embedded
// exported type.
func exported(field *ast.Field) bool {
	if len(field.Names) > 0 {
		return field.Names[0].IsExported()
	}
	t := field.Type
	if star, ok := t.(*ast.StarExpr); ok {
		t = star.X
	}
	switch t := t.(type) {
	case *ast.Ident:
		return t.IsExported()
	case *ast.SelectorExpr:
		return t.Sel.IsExported()
	}
	return false
}
