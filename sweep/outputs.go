package sweep

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"

	"goldstone/pipeline"
	"goldstone/runs"
)

// recordOutputs records the files of a finished or cached node's outputs in
// the results store (runs.Output: stage, cache directory, file, sha256),
// under its trial or under "" for stages the trials share, and the content
// digests of its external inputs (the data files) as run environment
// entries runs.InputEnvKey(path). A file output's digest is the one its
// cache manifest holds; files of directory outputs are hashed.
func (r *recorder) recordOutputs(ctx context.Context, ev pipeline.Event) {
	trial := ""
	if ti := r.built.TrialOf(ev.Node); ti >= 0 {
		trial = r.built.Trials[ti].Trial.ID
	}
	var outs []runs.Output
	var man struct {
		Inputs  map[string]string `json:"inputs"`
		Outputs map[string]string `json:"outputs"`
	}
	for name, path := range ev.Outputs {
		dir := filepath.Dir(path)
		if man.Outputs == nil {
			if b, err := os.ReadFile(filepath.Join(dir, "manifest.json")); err == nil {
				json.Unmarshal(b, &man)
			}
		}
		err := filepath.WalkDir(path, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			sum := ""
			if p == path {
				sum = man.Outputs[name]
			}
			if sum == "" {
				if sum, err = pipeline.Digest(ctx, p); err != nil {
					return err
				}
			}
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			outs = append(outs, runs.Output{RunID: r.run, Trial: trial, Stage: ev.Node, CacheDir: dir,
				File: filepath.ToSlash(rel), SHA256: sum, Bytes: info.Size()})
			return nil
		})
		if err != nil {
			r.log.Error("record outputs", "run", r.run, "node", ev.Node, "err", err)
			return
		}
	}
	if err := r.st.RecordOutputs(ctx, outs); err != nil {
		r.log.Error("record outputs", "run", r.run, "node", ev.Node, "err", err)
	}
	env := map[string]string{}
	if n := r.node(ev.Node); n != nil {
		for name, ref := range n.Inputs {
			if d := man.Inputs[name]; ref.External() && d != "" {
				p, err := filepath.Abs(ref.Path)
				if err != nil {
					p = ref.Path
				}
				env[runs.InputEnvKey(p)] = d
			}
		}
	}
	if err := r.st.SetEnv(ctx, r.run, env); err != nil {
		r.log.Error("record input digests", "run", r.run, "node", ev.Node, "err", err)
	}
}

// node returns the graph node with the given id.
func (r *recorder) node(id string) *pipeline.Node {
	if r.nodes == nil {
		r.nodes = map[string]*pipeline.Node{}
		for _, n := range r.built.Graph.Nodes {
			r.nodes[n.ID] = n
		}
	}
	return r.nodes[id]
}
