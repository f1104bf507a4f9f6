package pipeline

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	writeFile(t, src, "x")
	st := &catStage{}
	n := func(id string, ins map[string]Ref, outs ...string) *Node {
		if outs == nil {
			outs = []string{"out"}
		}
		return &Node{ID: id, Stage: st, Inputs: ins, Outputs: outs}
	}
	tests := []struct {
		name  string
		nodes []*Node
		want  []string // substrings of the error; nil = valid
	}{
		{"ok", []*Node{n("a", map[string]Ref{"in": File(src)}), n("b", map[string]Ref{"x": Out("a", "out")})}, nil},
		{"cycle", []*Node{
			n("a", map[string]Ref{"x": Out("c", "out")}),
			n("b", map[string]Ref{"x": Out("a", "out")}),
			n("c", map[string]Ref{"x": Out("b", "out")}),
		}, []string{"cycle a -> c -> b -> a"}},
		{"self loop", []*Node{n("a", map[string]Ref{"x": Out("a", "out")})}, []string{"cycle a -> a"}},
		{"missing node", []*Node{n("a", map[string]Ref{"x": Out("zz", "out")})}, []string{`node "a" input "x"`, `no node "zz"`}},
		{"missing output", []*Node{n("a", nil), n("b", map[string]Ref{"x": Out("a", "nope")})}, []string{`node "b" input "x"`, `no output "nope"`}},
		{"missing external", []*Node{n("a", map[string]Ref{"in": File(filepath.Join(dir, "absent"))})}, []string{`node "a" input "in"`, "absent"}},
		{"empty ref", []*Node{n("a", map[string]Ref{"in": {}})}, []string{"empty ref"}},
		{"both node and path", []*Node{n("a", nil), n("b", map[string]Ref{"in": {Node: "a", Output: "out", Path: src}})}, []string{"both node"}},
		{"duplicate id", []*Node{n("a", nil), n("a", nil)}, []string{`duplicate node ID "a"`}},
		{"duplicate output", []*Node{n("a", nil, "o", "o")}, []string{`duplicate output "o"`}},
		{"bad output name", []*Node{n("a", nil, "x/y")}, []string{`invalid output name "x/y"`}},
		{"reserved output name", []*Node{n("a", nil, "manifest.json")}, []string{"invalid output name"}},
		{"empty id", []*Node{n("", nil)}, []string{"empty ID"}},
		{"nil stage", []*Node{{ID: "a"}}, []string{"no stage"}},
		{"nil node", []*Node{nil}, []string{"is nil"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := (&Graph{Nodes: tc.nodes}).Validate()
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate: nil error, want %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestTopoOrderDeterministic(t *testing.T) {
	d := newDiamond(t)
	// Reverse the node list: the order must still be topological.
	g := &Graph{}
	for i := len(d.g.Nodes) - 1; i >= 0; i-- {
		g.Add(d.g.Nodes[i])
	}
	order, err := g.topo()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, n := range order {
		ids = append(ids, n.ID)
	}
	if got, want := strings.Join(ids, ","), "A,B,C,D"; got != want {
		t.Errorf("order = %s, want %s", got, want)
	}
}
