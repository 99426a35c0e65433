package dbtest

import (
	"ccplatform/pkg/freeport"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Cluster is a PostgreSQL cluster of a test's own: initdb into a temporary folder, its own port,
// started and stopped with pg_ctl, so that restarting it, or running it with settings the
// machine's cluster must not have, disturbs nothing else on the machine. As root it runs as the
// postgres user (PostgreSQL refuses to run as root).
type Cluster struct {
	bin, dir, port string
	asPostgres     bool
	settings       []string
}

// ClusterOptions changes a test's cluster from the default one (logical decoding on, as on the
// machine's cluster: scripts/deps.sh).
type ClusterOptions struct {
	// InitDB adds initdb arguments, such as --wal-segsize=1.
	InitDB []string
	// Settings adds server settings, each name=value; a later one wins over the defaults.
	Settings []string
}

// binDir is where Debian's postgresql package puts the server's binaries, the newest version
// first.
func binDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return vi > vj
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "pg_ctl")); err == nil {
			return d, nil
		}
	}
	return "", errors.New("no PostgreSQL server binaries under /usr/lib/postgresql/*/bin (scripts/deps.sh installs them)")
}

// StartCluster makes and starts a cluster for t, stopped and removed when t ends (its server log's
// tail printed when t failed). Its superuser is cc, trusted on 127.0.0.1.
func StartCluster(t testing.TB, o ClusterOptions) *Cluster {
	t.Helper()
	c, err := startCluster(o)
	if c != nil {
		t.Cleanup(func() {
			_ = c.pgctl("stop", "-m", "immediate")
			if t.Failed() {
				b, _ := os.ReadFile(filepath.Join(c.dir, "server.log"))
				if len(b) > 3000 {
					b = b[len(b)-3000:]
				}
				fmt.Fprintf(os.Stderr, "---- postgres cluster (tail) ----\n%s\n", b)
			}
			_ = os.RemoveAll(c.dir)
		})
	}
	if err != nil {
		t.Fatalf("dbtest: start a cluster: %v", err)
	}
	return c
}

func startCluster(o ClusterOptions) (*Cluster, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	// Not t.TempDir: its parents are private to this user, and the server may run as another.
	dir, err := os.MkdirTemp("", "cctest-pg-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{bin: bin, dir: dir, asPostgres: os.Geteuid() == 0, settings: o.Settings}
	if err := os.Chmod(dir, 0o755); err != nil {
		return c, err
	}
	addr, err := freeport.Addr()
	if err != nil {
		return c, err
	}
	c.port = addr[strings.LastIndex(addr, ":")+1:]
	if c.asPostgres {
		if out, err := exec.Command("chown", "postgres:postgres", dir).CombinedOutput(); err != nil {
			return c, fmt.Errorf("chown %s: %w: %s", dir, err, out)
		}
	}
	// Trust on loopback: the cluster lives for the test only and listens on 127.0.0.1 only.
	args := append([]string{"-D", c.data(), "-U", "cc", "--auth=trust", "-E", "UTF8", "--no-sync"}, o.InitDB...)
	if err := c.run("initdb", args...); err != nil {
		return c, err
	}
	return c, c.Start()
}

func (c *Cluster) data() string { return filepath.Join(c.dir, "data") }

// URL is the cluster's postgres database as its superuser cc.
func (c *Cluster) URL() string {
	return "postgres://cc@127.0.0.1:" + c.port + "/postgres?sslmode=disable"
}

// Start starts the server (on the same data after a Stop) and waits until it accepts connections.
// Every service's pool fits under max_connections.
func (c *Cluster) Start() error {
	// Lead events leave through logical decoding, as on the machine's cluster (scripts/deps.sh).
	opts := "-p " + c.port + " -k " + c.dir + " -c listen_addresses=127.0.0.1 -c max_connections=400" +
		" -c wal_level=logical -c max_slot_wal_keep_size=2GB"
	for _, s := range c.settings {
		opts += " -c " + s
	}
	if err := c.pgctl("start", "-w", "-t", "60", "-l", filepath.Join(c.dir, "server.log"), "-o", opts); err != nil {
		return err
	}
	conn, err := net.DialTimeout("tcp", "127.0.0.1:"+c.port, time.Second)
	if err != nil {
		return fmt.Errorf("postgres started but does not listen: %w", err)
	}
	return conn.Close()
}

// Stop shuts the server down as pg_ctlcluster restart does (fast: open sessions are ended).
func (c *Cluster) Stop() error { return c.pgctl("stop", "-w", "-t", "60", "-m", "fast") }

func (c *Cluster) pgctl(args ...string) error {
	return c.run("pg_ctl", append([]string{"-D", c.data()}, args...)...)
}

func (c *Cluster) run(tool string, args ...string) error {
	name, argv := filepath.Join(c.bin, tool), args
	if c.asPostgres {
		name, argv = "runuser", append([]string{"-u", "postgres", "--", filepath.Join(c.bin, tool)}, args...)
	}
	cmd := exec.Command(name, argv...)
	cmd.Dir = c.dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %w\n%s", tool, strings.Join(args, " "), err, out)
	}
	return nil
}
