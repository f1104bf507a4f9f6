package dwe_test

import (
	"context"
	"fmt"
	"math/rand/v2"

	"goldstone/models/dwe"
)

// Fit the MAP model to counts generated from planted embeddings.
func ExampleTrainer() {
	counts, _, err := dwe.Planted{V: 20, T: 3, Dim: 2}.Generate(rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		panic(err)
	}
	m, err := dwe.NewMAP(counts, dwe.Config{Dim: 2})
	if err != nil {
		panic(err)
	}
	fmt.Printf("params %d, blocks %+v\n", m.NumParams(), m.Blocks())
	x := make([]float64, m.NumParams())
	m.Init(x, rand.New(rand.NewPCG(2, 2)))
	tr := dwe.Trainer{Model: m, Steps: 500, MinibatchSteps: 100, BatchWords: 10, BatchContexts: 10, Seed: 1}
	var first, last float64
	err = tr.Run(context.Background(), x, func(it *dwe.Iter) error {
		if it.Step == 0 {
			first = it.Loss
		}
		last = it.Loss
		return nil
	})
	fmt.Println(err, last < first)
	// Output:
	// params 240, blocks {Offset:0 T:3 N:40 D:2}
	// <nil> true
}
