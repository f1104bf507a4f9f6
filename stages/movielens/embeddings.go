package movielens

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"

	"goldstone/formats/ratings"

	"goldstone/pipeline"
	"goldstone/trialio"
)

// ExportSettings choose what a trial writes beyond its metrics.
type ExportSettings struct {
	Embeddings bool `set:"export_embeddings" default:"false" doc:"write the trial's trained user and item vectors under their original ids (embeddings.parquet: t, entity, index, id, vector)"`
}

// PruneKeys leaves export_embeddings out of a trial's keys unless it is on (trials that
// export nothing keep their ids).
func (s ExportSettings) PruneKeys(m map[string]any) {
	if !s.Embeddings {
		delete(m, "export_embeddings")
	}
}

// EmbeddingsFile is the output of the embeddings stage.
const EmbeddingsFile = "embeddings.parquet"

// EmbeddingsStage writes a trained model's vectors with the original ids.
type EmbeddingsStage struct{}

func (*EmbeddingsStage) Name() string    { return "export-embeddings" }
func (*EmbeddingsStage) Version() string { return EmbeddingsVersion }
func (*EmbeddingsStage) Params() any     { return map[string]any{} }
func (*EmbeddingsStage) Run(ctx context.Context, io *pipeline.IO) error {
	n, err := WriteEmbeddings(ctx, io.Input("model"), io.Input("binned"), io.Input("ids"), io.Output(EmbeddingsFile))
	if err == nil {
		io.Logf("wrote %d vectors with their original ids", n)
	}
	return err
}

// OriginalIDs returns the id text of each dense index of an id map (Bin's
// binned.users.parquet or binned.items.parquet) for column (IDColumnUser or IDColumnItem),
// through the ingest's id dictionary (IDNamesPath): a code >= 0 is the number itself.
func OriginalIDs(ctx context.Context, idMap, names, column string) ([]string, error) {
	codes, err := ratings.ReadIDMap(ctx, idMap)
	if err != nil {
		return nil, err
	}
	dict, err := ratings.ReadAll[ratings.IDName](ctx, names)
	if err != nil {
		return nil, err
	}
	text := map[int32]string{}
	for _, d := range dict {
		if d.Column == column {
			text[d.Code] = d.ID
		}
	}
	out := make([]string, len(codes))
	for i, c := range codes {
		if c >= 0 {
			out[i] = strconv.Itoa(int(c))
			continue
		}
		s, ok := text[c]
		if !ok {
			return nil, fmt.Errorf("%s: %s code %d (index %d) is not in the id dictionary %s", idMap, column, c, i, names)
		}
		out[i] = s
	}
	return out, nil
}

// WriteEmbeddings writes the vectors of the model in modelDir (train's output), bin by bin,
// users then items, as ratings.Embedding rows under their original ids (binnedDir: Bin's output;
// names: the ingest's id dictionary), and returns the number of rows.
func WriteEmbeddings(ctx context.Context, modelDir, binnedDir, names, dst string) (int64, error) {
	var meta modelMeta
	if err := trialio.ReadJSON(filepath.Join(modelDir, "model.json"), &meta); err != nil {
		return 0, err
	}
	x, err := readParams(modelDir, meta, true)
	if err != nil {
		return 0, err
	}
	binned := filepath.Join(binnedDir, "binned.parquet")
	up, ip := IDMapPaths(binned)
	users, err := OriginalIDs(ctx, up, names, ratings.IDColumnUser)
	if err != nil {
		return 0, err
	}
	items, err := OriginalIDs(ctx, ip, names, ratings.IDColumnItem)
	if err != nil {
		return 0, err
	}
	if len(users) != meta.Users || len(items) != meta.Items {
		return 0, fmt.Errorf("export embeddings: the id maps list %d users and %d items, model.json %d and %d", len(users), len(items), meta.Users, meta.Items)
	}
	var rows int64
	err = ratings.WriteTable(dst, 0, func(w *ratings.TableWriter[ratings.Embedding]) error {
		n, d := meta.Users+meta.Items, meta.D
		buf := make([]ratings.Embedding, 0, n)
		for t := range meta.T {
			if err := ctx.Err(); err != nil {
				return err
			}
			buf = buf[:0]
			for c := range n {
				e := ratings.Embedding{T: int32(t), Entity: ratings.IDColumnUser, Index: int32(c), Vector: x[(t*n+c)*d : (t*n+c+1)*d]}
				if c < meta.Users {
					e.ID = users[c]
				} else {
					e.Entity, e.Index, e.ID = ratings.IDColumnItem, int32(c-meta.Users), items[c-meta.Users]
				}
				buf = append(buf, e)
			}
			if _, err := w.Write(buf); err != nil {
				return fmt.Errorf("write %s: %w", dst, err)
			}
			rows += int64(len(buf))
		}
		return nil
	})
	return rows, err
}
