package formats

import (
	"strings"
	"testing"
)

func TestRegistry(t *testing.T) {
	r := NewRegistry[int]("corpus_format")
	r.Register("text", 1)
	r.Register("jsonl", 2)
	if got := r.Names(); len(got) != 2 || got[0] != "text" || got[1] != "jsonl" {
		t.Fatalf("Names = %v", got)
	}
	if f, err := r.Lookup("jsonl"); err != nil || f != 2 {
		t.Fatalf("Lookup(jsonl) = %v, %v", f, err)
	}
	_, err := r.Lookup("jsnl")
	if err == nil || !strings.Contains(err.Error(), `corpus_format "jsnl"`) || !strings.Contains(err.Error(), `did you mean "jsonl"?`) {
		t.Fatalf("Lookup(jsnl): %v", err)
	}
	if all := r.All(); len(all) != 2 || all[0] != 1 || all[1] != 2 {
		t.Fatalf("All = %v", all)
	}
	for name, fn := range map[string]func(){
		"after a read": func() { r.Register("csv", 3) },
		"twice":        func() { q := NewRegistry[int]("x"); q.Register("a", 1); q.Register("a", 2) },
		"empty name":   func() { NewRegistry[int]("x").Register("", 1) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register %s: no panic", name)
				}
			}()
			fn()
		}()
	}
}
