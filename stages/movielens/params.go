package movielens

import (
	"fmt"
	"path/filepath"
	"slices"

	"goldstone/stages/trialio"
)

// Trained parameters of Model 2 in a train-movielens output, as .npy files
// (little-endian float64, C order; trialio.WriteNpy):
//
//	params.npy     shape (T, users+items, d): bin t, column i: user i for
//	               i < users, item i-users after (dense indices; the
//	               original MovieLens ids are in the binned output's
//	               users.parquet and items.parquet)
//	item_bias.npy  shape (items,), only with the bias setting
//	bin_bias.npy   shape (T,), only with the bias setting
const (
	ParamsFile   = "params.npy"
	ItemBiasFile = "item_bias.npy"
	BinBiasFile  = "bin_bias.npy"
)

// writeParams writes x, the model's parameter vector (blocks, then with
// bias the item and bin biases), into dir.
func writeParams(dir string, x []float64, T, users, items, d int, bias bool) error {
	n := T * (users + items) * d
	want := n
	if bias {
		want += items + T
	}
	if len(x) != want {
		return fmt.Errorf("write parameters: %d values, want %d", len(x), want)
	}
	if err := trialio.WriteNpy(filepath.Join(dir, ParamsFile), x[:n], T, users+items, d); err != nil {
		return err
	}
	if !bias {
		return nil
	}
	if err := trialio.WriteNpy(filepath.Join(dir, ItemBiasFile), x[n:n+items], items); err != nil {
		return err
	}
	return trialio.WriteNpy(filepath.Join(dir, BinBiasFile), x[n+items:], T)
}

// readParams reads what writeParams wrote back into one vector, checking
// every shape against the model's dimensions.
func readParams(dir string, T, users, items, d int, bias bool) ([]float64, error) {
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
	x, err := read(ParamsFile, T, users+items, d)
	if err != nil || !bias {
		return x, err
	}
	ib, err := read(ItemBiasFile, items)
	if err != nil {
		return nil, err
	}
	bb, err := read(BinBiasFile, T)
	if err != nil {
		return nil, err
	}
	return slices.Concat(x, ib, bb), nil
}
