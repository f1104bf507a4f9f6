package movielens

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"goldstone/formats/ratings"

	"goldstone/models"
	"goldstone/trialio"
)

// The exported vectors carry the ids of the source table: text ids through the
// dictionary, numbers as themselves, in the dense order of the id maps.
func TestWriteEmbeddingsOriginalIDs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	text := "user,item,stars,date\n" +
		"alice,The Matrix,5,2020-01-01\n" +
		"bob,The Matrix,1,2020-01-02\n" +
		"7,Heat,4,2020-03-01\n" +
		"alice,Heat,2,2020-06-01\n" +
		"bob,12,5,2020-06-02\n"
	src := writeFile(t, filepath.Join(dir, "in.csv"), []byte(text))
	l, err := (ratings.TableSettings{Layout: "auto", User: "user", Item: "item", Rating: "stars", Time: "date", Delimiter: ",", Header: true, TimeFormat: ratings.TimeRFC3339}).Resolve()
	if err != nil {
		t.Fatal(err)
	}
	raw := filepath.Join(dir, "ratings.parquet")
	if _, err := ratings.Ingest(ctx, src, raw, ratings.IngestOptions{Layout: l}); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "binary.parquet")
	if _, err := Binarize(ctx, raw, bin); err != nil {
		t.Fatal(err)
	}
	binnedDir := filepath.Join(dir, "binned")
	os.MkdirAll(binnedDir, 0o755)
	res, err := Bin(ctx, bin, filepath.Join(binnedDir, "binned.parquet"), 2)
	if err != nil {
		t.Fatal(err)
	}
	U, I, T, d := len(res.Users), len(res.Items), 2, 2
	model := filepath.Join(dir, "model")
	os.MkdirAll(model, 0o755)
	meta := modelMeta{T: T, Users: U, Items: I, D: d, Labels: "binary", Arrays: []models.Array{{Name: "item_bias", Len: I}, {Name: "mean", Len: 1}}}
	x := make([]float64, T*(U+I)*d+I+1) // the arrays after the blocks are not exported
	for k := range x {
		x[k] = float64(k)
	}
	if err := writeParams(model, x, meta); err != nil {
		t.Fatal(err)
	}
	if err := trialio.WriteJSON(filepath.Join(model, "model.json"), meta); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, EmbeddingsFile)
	n, err := WriteEmbeddings(ctx, model, binnedDir, ratings.IDNamesPath(raw), dst)
	if err != nil || n != int64(T*(U+I)) {
		t.Fatalf("%d rows, %v", n, err)
	}
	rows, err := ratings.ReadAll[ratings.Embedding](ctx, dst)
	if err != nil {
		t.Fatal(err)
	}
	users, items := map[string]bool{}, map[string]bool{}
	for k, r := range rows {
		c := k % (U + I)
		if int(r.T) != k/(U+I) || len(r.Vector) != d || r.Vector[0] != float64((k)*d) {
			t.Fatalf("row %d: %+v", k, r)
		}
		if c < U {
			users[r.ID] = r.Entity == "user" && int(r.Index) == c
		} else {
			items[r.ID] = r.Entity == "item" && int(r.Index) == c-U
		}
	}
	// The median is 4: the 4 and its row are dropped ("7" and "Heat" remain through others).
	for _, id := range []string{"alice", "bob"} {
		if !users[id] {
			t.Errorf("users %v: want %s", users, id)
		}
	}
	for _, id := range []string{"The Matrix", "Heat", "12"} {
		if !items[id] {
			t.Errorf("items %v: want %s", items, id)
		}
	}
}
