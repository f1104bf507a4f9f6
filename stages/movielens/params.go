package movielens

import (
	"fmt"
	"path/filepath"
	"slices"

	"goldstone/models"
	"goldstone/trialio"
)

// Trained parameters of a ratings model in a train-movielens output, as
// .npy files (little-endian float64, C order; trialio.WriteNpy):
//
//	params.npy     shape (T, users+items, d): bin t, column i: user i for
//	               i < users, item i-users after (dense indices; the
//	               original MovieLens ids are in the binned output's
//	               users.parquet and items.parquet)
//	<array>.npy    shape (len,): one per parameter array of the model after
//	               the blocks, named in model.json's arrays (logistic with
//	               bias: item_bias.npy, bin_bias.npy, user_bias.npy; gaussian: item_bias.npy,
//	               bin_bias.npy, user_bias.npy, mean.npy)
const ParamsFile = "params.npy"

// writeParams writes x, the model's parameter vector (blocks, then the
// arrays of meta), into dir.
func writeParams(dir string, x []float64, meta modelMeta) error {
	n := meta.T * (meta.Users + meta.Items) * meta.D
	if want := n + models.ArraysLen(meta.Arrays); len(x) != want {
		return fmt.Errorf("write parameters: %d values, want %d", len(x), want)
	}
	if err := trialio.WriteNpy(filepath.Join(dir, ParamsFile), x[:n], meta.T, meta.Users+meta.Items, meta.D); err != nil {
		return err
	}
	for _, a := range meta.Arrays {
		if err := trialio.WriteNpy(filepath.Join(dir, a.Name+".npy"), x[n:n+a.Len], a.Len); err != nil {
			return err
		}
		n += a.Len
	}
	return nil
}

// readParams reads what writeParams wrote back into one vector, checking
// every shape against the model's dimensions; with blocksOnly it reads
// params.npy alone.
func readParams(dir string, meta modelMeta, blocksOnly bool) ([]float64, error) {
	read := func(name string, shape ...int) ([]float64, error) {
		path := filepath.Join(dir, name)
		x, got, err := trialio.ReadNpy(path)
		if err != nil {
			return nil, err
		}
		if !slices.Equal(got, shape) {
			return nil, fmt.Errorf("%s: shape %v, model.json says %v", path, got, shape)
		}
		return x, nil
	}
	x, err := read(ParamsFile, meta.T, meta.Users+meta.Items, meta.D)
	if err != nil || blocksOnly {
		return x, err
	}
	for _, a := range meta.Arrays {
		v, err := read(a.Name+".npy", a.Len)
		if err != nil {
			return nil, err
		}
		x = append(x, v...)
	}
	return x, nil
}
