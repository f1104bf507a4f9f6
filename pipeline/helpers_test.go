package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// counter counts stage runs per node.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) inc(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[id]++
}

func (c *counter) get(id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[id]
}

func (c *counter) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := 0
	for _, v := range c.n {
		s += v
	}
	return s
}

// catStage writes the concatenation of its inputs (in the order of ins)
// followed by suffix to output "out". hook, if set, runs first and may fail.
type catStage struct {
	suffix  string
	version string
	ins     []string
	calls   *counter
	hook    func(ctx context.Context, io *IO) error
}

func (s *catStage) Name() string { return "cat" }
func (s *catStage) Version() string {
	if s.version == "" {
		return "1"
	}
	return s.version
}
func (s *catStage) Params() any { return map[string]any{"suffix": s.suffix} }
func (s *catStage) Run(ctx context.Context, io *IO) error {
	if s.calls != nil {
		s.calls.inc(io.Node())
	}
	if s.hook != nil {
		if err := s.hook(ctx, io); err != nil {
			return err
		}
	}
	var b strings.Builder
	for _, in := range s.ins {
		data, err := os.ReadFile(io.Input(in))
		if err != nil {
			return err
		}
		b.Write(data)
	}
	b.WriteString(s.suffix)
	return os.WriteFile(io.Output("out"), []byte(b.String()), 0o644)
}

// diamond is src -> A -> B -> D and src -> C -> D.
type diamond struct {
	dir, src string
	calls    *counter
	g        *Graph
	st       map[string]*catStage
}

func newDiamond(t *testing.T) *diamond {
	t.Helper()
	d := &diamond{dir: t.TempDir(), calls: &counter{}, st: map[string]*catStage{}}
	d.src = filepath.Join(d.dir, "src.txt")
	writeFile(t, d.src, "hello")
	mk := func(id, suffix string, ins map[string]Ref) {
		names := make([]string, 0, len(ins))
		for k := range ins {
			names = append(names, k)
		}
		sort.Strings(names)
		s := &catStage{suffix: suffix, ins: names, calls: d.calls}
		d.st[id] = s
		d.g = addNode(d.g, &Node{ID: id, Stage: s, Inputs: ins, Outputs: []string{"out"}})
	}
	mk("A", "-a", map[string]Ref{"in": File(d.src)})
	mk("B", "-b", map[string]Ref{"x": Out("A", "out")})
	mk("C", "-c", map[string]Ref{"in": File(d.src)})
	mk("D", "-d", map[string]Ref{"b": Out("B", "out"), "c": Out("C", "out")})
	return d
}

func addNode(g *Graph, n *Node) *Graph {
	if g == nil {
		g = &Graph{}
	}
	g.Add(n)
	return g
}

func (d *diamond) opts(jobs int) Options {
	return Options{WorkDir: filepath.Join(d.dir, "work"), Jobs: jobs}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// recorder is an Observer that keeps events; it checks that calls are
// serialised.
type recorder struct {
	mu     sync.Mutex
	events []Event
	t      *testing.T
}

func (r *recorder) Event(e Event) {
	if !r.mu.TryLock() {
		r.t.Errorf("observer called concurrently (event %v %s)", e.Kind, e.Node)
		r.mu.Lock()
	}
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

// kinds returns, per node, the kinds of its events other than Log/Progress.
func (r *recorder) kinds() map[string][]EventKind {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := map[string][]EventKind{}
	for _, e := range r.events {
		if e.Kind != Log && e.Kind != Progress {
			m[e.Node] = append(m[e.Node], e.Kind)
		}
	}
	return m
}

func mustRun(t *testing.T, g *Graph, o Options) *Result {
	t.Helper()
	res, err := Run(context.Background(), g, o)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

func statuses(res *Result) map[string]EventKind {
	m := map[string]EventKind{}
	for id, nr := range res.Nodes {
		m[id] = nr.Status
	}
	return m
}

// cacheEntries lists WorkDir/cache/<stage>/<key> directories (not their
// lock files, <key>.lock).
func cacheEntries(t *testing.T, work string) []string {
	t.Helper()
	all, _ := filepath.Glob(filepath.Join(work, "cache", "*", "*"))
	var dirs []string
	for _, d := range all {
		if !strings.HasSuffix(d, ".lock") {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, de := range des {
		out = append(out, de.Name())
	}
	return out
}
