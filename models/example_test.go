package models_test

import (
	"fmt"
	"math/rand/v2"

	"goldstone/models"
)

// The paper's artificial experiment: a 10 x 10 rank-3 matrix shared by
// T = 30 time steps, chain coupling lambda = 10.
func ExampleDenseMF() {
	x := models.Artificial(1, 10, 10, 3, 1e-3)
	m := &models.DenseMF{X: [][]float64{x}, Rows: 10, Cols: 10, D: 3, T: 30, Lambda: 10}
	if err := m.Validate(); err != nil {
		fmt.Println(err)
		return
	}
	p := models.ProblemOf(m)
	z := make([]float64, m.NumParams())
	m.Init(z, rand.New(rand.NewPCG(1, 2)))
	grad := make([]float64, len(z))
	fmt.Println("params:", m.NumParams(), "blocks:", p.Blocks.T, p.Blocks.N, p.Blocks.D, "edges:", len(p.Graph.Edges))
	fmt.Println("initial local loss above optimum:", p.Local(grad, z) > models.OptimalLoss(x, 10, 10, 3, 30))
	// Output:
	// params: 1800 blocks: 30 20 3 edges: 29
	// initial local loss above optimum: true
}

func ExampleLogisticMF() {
	train := &models.Ratings{}
	train.Append(0, 0, 0, 1)  // bin 0: user 0 likes item 0
	train.Append(0, 1, 0, -1) // bin 0: user 1 dislikes item 0
	train.Append(1, 0, 1, 1)  // bin 1: user 0 likes item 1
	m := models.NewLogisticMF(models.RatingsSpec{Train: train, Users: 2, Items: 2, D: 2, T: 2, Lambda: 10, Gamma: 1}, false)
	if err := m.Validate(); err != nil {
		fmt.Println(err)
		return
	}
	z := make([]float64, m.NumParams()) // all zero: every rating has p = 1/2
	grad := make([]float64, len(z))
	fmt.Printf("loss %.4f = 3 log 2\n", m.LocalLoss(grad, z))
	test := &models.Ratings{}
	test.Append(1, 1, 1, -1)
	met, err := m.Evaluate(z, test)
	fmt.Printf("held-out log-lik %.4f, accuracy %.2f, err %v\n", met.LogLik, met.Accuracy, err)
	// Output:
	// loss 2.0794 = 3 log 2
	// held-out log-lik -0.6931, accuracy 0.50, err <nil>
}

func ExampleAUC() {
	fmt.Println(models.AUC([]float64{0.9, 0.5}, []float64{0.5, 0.1, 0.9}))
	// Output: 0.6666666666666666
}
