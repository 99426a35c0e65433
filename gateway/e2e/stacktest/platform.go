package stacktest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// stackScript is what `make up` runs; its PROCESSES table is the platform.
const stackScript = "scripts/stack.sh"

// Platform is every process `make up` starts, in its order, read from the PROCESSES and CONSUMERS
// of scripts/stack.sh: a program that must run the whole platform (the soak) cannot fall behind
// when a binary is added there. Every process is waited for at /readyz, as the script does. The
// table's ports are not used (the stack picks free ones), nor its *_ADDR variables (addresses the
// stack sets itself); its other variables are kept.
func Platform() ([]Process, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(root, stackScript))
	if err != nil {
		return nil, fmt.Errorf("platform: %w", err)
	}
	defer f.Close()
	procs, err := parseStackScript(f)
	if err != nil {
		return nil, fmt.Errorf("platform: %s: %w", stackScript, err)
	}
	return procs, nil
}

// parseStackScript reads the process table of scripts/stack.sh: the lines between `PROCESSES=(`
// and `)`, each "name | package | port | env" in quotes, and the names of `CONSUMERS="..."`.
func parseStackScript(r io.Reader) ([]Process, error) {
	var procs []Process
	consumers := map[string]bool{}
	in, seenTable, seenConsumers := false, false, false
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "PROCESSES=(":
			in, seenTable = true, true
		case in && line == ")":
			in = false
		case in:
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			p, err := parseProcessLine(line)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", n, err)
			}
			procs = append(procs, p)
		case strings.HasPrefix(line, "CONSUMERS="):
			v := strings.TrimPrefix(line, "CONSUMERS=")
			if i := strings.Index(v, "#"); i >= 0 {
				v = v[:i]
			}
			for _, name := range strings.Fields(strings.Trim(strings.TrimSpace(v), `"`)) {
				consumers[name] = true
			}
			seenConsumers = true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	if !seenTable || in || len(procs) == 0 {
		return nil, fmt.Errorf("no PROCESSES=( ... ) table")
	}
	if !seenConsumers {
		return nil, fmt.Errorf("no CONSUMERS line")
	}
	for i := range procs {
		procs[i].Consumer = consumers[procs[i].Name]
		delete(consumers, procs[i].Name)
	}
	for name := range consumers {
		return nil, fmt.Errorf("CONSUMERS names %s, which is not in PROCESSES", name)
	}
	return procs, nil
}

func parseProcessLine(line string) (Process, error) {
	if len(line) < 2 || line[0] != '"' || line[len(line)-1] != '"' {
		return Process{}, fmt.Errorf("want \"name | package | port | env\", got %s", line)
	}
	cols := strings.Split(line[1:len(line)-1], "|")
	if len(cols) != 4 {
		return Process{}, fmt.Errorf("want 4 columns (name | package | port | env), got %d: %s", len(cols), line)
	}
	p := Process{Name: strings.TrimSpace(cols[0]), Pkg: strings.TrimSpace(cols[1]), Health: "/readyz"}
	if p.Name == "" || !strings.HasPrefix(p.Pkg, "./") {
		return Process{}, fmt.Errorf("want a name and a package ./...: %s", line)
	}
	for _, kv := range strings.Fields(cols[3]) {
		if k, _, _ := strings.Cut(kv, "="); !strings.HasSuffix(k, "_ADDR") {
			p.Env = append(p.Env, kv)
		}
	}
	return p, nil
}
