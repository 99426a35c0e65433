package k8stest

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/mod/modfile"
)

// sourceTree parses the packages of the repository's Go workspace on demand. It reads the sources
// as text (go/ast): no type checking, so it needs none of the workspace's dependencies.
type sourceTree struct {
	root    string // absolute
	fset    *token.FileSet
	modules map[string]string // module path → absolute directory, for the modules of go.work
	pkgs    map[string]*goPackage
}

// goPackage is one parsed package: the non-test files `go build` would compile on this platform.
type goPackage struct {
	importPath string
	dir        string
	name       string
	files      []*ast.File
}

// newSourceTree reads go.work at root and the go.mod of every module it uses: those modules are
// what deployments/docker/Dockerfile builds into the image.
func newSourceTree(root string) (*sourceTree, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	workPath := filepath.Join(root, "go.work")
	data, err := os.ReadFile(workPath)
	if err != nil {
		return nil, err
	}
	work, err := modfile.ParseWork(workPath, data, nil)
	if err != nil {
		return nil, err
	}
	s := &sourceTree{root: root, fset: token.NewFileSet(), modules: map[string]string{}, pkgs: map[string]*goPackage{}}
	for _, use := range work.Use {
		dir := filepath.Join(root, use.Path)
		mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err != nil {
			return nil, err
		}
		s.modules[modfile.ModulePath(mod)] = dir
	}
	if len(s.modules) == 0 {
		return nil, fmt.Errorf("%s lists no module", workPath)
	}
	return s, nil
}

// dirOf is the directory of a workspace package, or false for a package from outside (the
// standard library, a dependency).
func (s *sourceTree) dirOf(importPath string) (string, bool) {
	best := ""
	for mod := range s.modules {
		if (importPath == mod || strings.HasPrefix(importPath, mod+"/")) && len(mod) > len(best) {
			best = mod
		}
	}
	if best == "" {
		return "", false
	}
	return filepath.Join(s.modules[best], filepath.FromSlash(strings.TrimPrefix(importPath, best))), true
}

// load parses a workspace package once.
func (s *sourceTree) load(importPath string) (*goPackage, error) {
	if p, ok := s.pkgs[importPath]; ok {
		return p, nil
	}
	dir, ok := s.dirOf(importPath)
	if !ok {
		return nil, fmt.Errorf("%s is not in the workspace", importPath)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	p := &goPackage{importPath: importPath, dir: dir}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		// Build constraints as the image's `go build` sees them: a file behind a build tag (the
		// fault test's, say) is not part of the binary.
		match, err := build.Default.MatchFile(dir, name)
		if err != nil {
			return nil, err
		}
		if !match {
			continue
		}
		f, err := parser.ParseFile(s.fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		p.files = append(p.files, f)
		p.name = f.Name.Name
	}
	if len(p.files) == 0 {
		return nil, fmt.Errorf("%s: no Go files in %s", importPath, dir)
	}
	s.pkgs[importPath] = p
	return p, nil
}

// imports maps the names file f refers to its imports by to their import paths.
func (s *sourceTree) imports(f *ast.File) (map[string]string, error) {
	out := map[string]string{}
	for _, spec := range f.Imports {
		p, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			return nil, err
		}
		name := path.Base(p)
		switch {
		case spec.Name != nil:
			name = spec.Name.Name
		case s.isLocal(p):
			// A workspace package's name is its package clause, not its directory.
			q, err := s.load(p)
			if err != nil {
				return nil, err
			}
			name = q.name
		}
		out[name] = p
	}
	return out, nil
}

func (s *sourceTree) isLocal(importPath string) bool {
	_, ok := s.dirOf(importPath)
	return ok
}

// closure is pkg and every workspace package it imports, directly or not: the code of a binary
// that is this repository's.
func (s *sourceTree) closure(importPath string) ([]*goPackage, error) {
	var out []*goPackage
	seen := map[string]bool{importPath: true}
	queue := []string{importPath}
	for len(queue) > 0 {
		p, err := s.load(queue[0])
		if err != nil {
			return nil, err
		}
		queue = queue[1:]
		out = append(out, p)
		for _, f := range p.files {
			for _, spec := range f.Imports {
				dep, err := strconv.Unquote(spec.Path.Value)
				if err != nil {
					return nil, err
				}
				if s.isLocal(dep) && !seen[dep] {
					seen[dep] = true
					queue = append(queue, dep)
				}
			}
		}
	}
	return out, nil
}

// typeSpec finds the declaration of the package-level type name in p.
func (p *goPackage) typeSpec(name string) (*ast.TypeSpec, *ast.File) {
	for _, f := range p.files {
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				if ts := spec.(*ast.TypeSpec); ts.Name.Name == name {
					return ts, f
				}
			}
		}
	}
	return nil, nil
}

// funcDecl finds the package-level function name in p.
func (p *goPackage) funcDecl(name string) (*ast.FuncDecl, *ast.File) {
	for _, f := range p.files {
		for _, decl := range f.Decls {
			if fd, ok := decl.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name == name {
				return fd, f
			}
		}
	}
	return nil, nil
}

// stringConst is the value of the string constant name declared in file (relative to the
// repository's root).
func stringConst(root, file, name string) (string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, file), nil, parser.SkipObjectResolution)
	if err != nil {
		return "", err
	}
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, id := range vs.Names {
				if id.Name != name || i >= len(vs.Values) {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return "", fmt.Errorf("%s: const %s is not a string literal", file, name)
				}
				return strconv.Unquote(lit.Value)
			}
		}
	}
	return "", fmt.Errorf("%s: no const %s", file, name)
}

// rootDir is the workspace root: the directory of go.work.
func (s *sourceTree) rootDir() string { return s.root }

// packageOfFile is the import path of the package holding file (relative to the root).
func (s *sourceTree) packageOfFile(file string) string {
	dir := filepath.Dir(filepath.Join(s.root, file))
	best, bestDir := "", ""
	for mod, mdir := range s.modules {
		if (dir == mdir || strings.HasPrefix(dir, mdir+string(filepath.Separator))) && len(mdir) > len(bestDir) {
			best, bestDir = mod, mdir
		}
	}
	if best == "" {
		return ""
	}
	rel, err := filepath.Rel(bestDir, dir)
	if err != nil || rel == "." {
		return best
	}
	return best + "/" + filepath.ToSlash(rel)
}
