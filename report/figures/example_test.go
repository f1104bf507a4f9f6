package figures_test

import (
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"

	"goldstone/report/figures"
)

func ExampleHistCounts() {
	cos := []float64{-0.2, 0.1, 0.4, 0.5, 0.9, 1, math.NaN()}
	fmt.Println(figures.HistCounts(cos, 4, -1, 1))
	fmt.Println(figures.Median(cos))
	// Output:
	// [0 1 2 3]
	// 0.45
}

func ExampleCurves() {
	dir, err := os.MkdirTemp("", "figures")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	steps := make([]float64, 1000)
	gd, gs := make([]float64, 1000), make([]float64, 1000)
	for i := range steps {
		steps[i] = float64(i)
		gd[i] = 1 / math.Sqrt(float64(i+1))
		gs[i] = 1 / float64(i+1)
	}
	spec := figures.CurveSpec{Title: "Loss gap", Panels: []figures.Panel{{
		XLabel: "step", YLabel: "L - L*", LogX: true, LogY: true, // step 0 is dropped
		Series: []figures.Series{
			{Name: "GD", X: steps, Y: gd},
			{Name: "Goldstone-GD", X: steps, Y: gs, Dashed: true},
		},
	}}}
	path := filepath.Join(dir, "gap.png")
	if err := figures.Curves(path, spec); err != nil {
		log.Fatal(err)
	}
	_, err = os.Stat(path)
	fmt.Println(err == nil)
	// Output: true
}

func ExampleHistogram() {
	dir, err := os.MkdirTemp("", "figures")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	spec := figures.HistSpec{
		Title:  "cos(u_first, u_last)",
		XLabel: "cosine", // bins: 40 over [-1, 1] by default
		Samples: []figures.Sample{
			{Name: "GD", Values: []float64{-0.3, 0.2, 0.5, 0.7}},
			{Name: "Goldstone-GD", Values: []float64{0.9, 0.95, 0.97, 1}},
		},
	}
	err = figures.Histogram(filepath.Join(dir, "cos.png"), spec)
	fmt.Println(err)
	// Output: <nil>
}

func ExampleTrajectories() {
	dir, err := os.MkdirTemp("", "figures")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	// T = 3 time steps of N = 2 embeddings in D = 3.
	snap := figures.Snapshot{T: 3, N: 2, D: 3, Z: []float64{
		1, 0, 0, 0, 1, 0, // t = 0: z_{0,0}, z_{0,1}
		0.9, 0.1, 0, 0.1, 0.9, 0.1, // t = 1
		0.8, 0.3, 0.1, 0.2, 0.8, 0.2, // t = 2
	}}
	spec := figures.TrajSpec{
		Rows: []string{"GD"}, Cols: []string{"step 0"},
		Data: [][]figures.Snapshot{{snap}},
	}
	err = figures.Trajectories(filepath.Join(dir, "traj.png"), spec)
	fmt.Println(err)
	// Output: <nil>
}

// A sweep figure: test_ll against lambda, one panel per variant, the mean
// over two seeds with ± one standard deviation.
func ExampleSweep() {
	dir, err := os.MkdirTemp("", "figures-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	var pts []figures.SweepPoint
	for _, v := range []string{"gd", "goldstone"} {
		for _, lam := range []string{"1", "10", "100"} {
			for seed := range 2 {
				pts = append(pts, figures.SweepPoint{Variant: v, Settings: map[string]string{"lambda": lam},
					Value: -1 - float64(len(lam))/10 - float64(seed)/100})
			}
		}
	}
	path := filepath.Join(dir, "sweep.png")
	err = figures.Sweep(path, figures.SweepSpec{Metric: "test_ll", Settings: []string{"lambda"},
		LogX: map[string]bool{"lambda": true}, Points: pts})
	fmt.Println(err)
	// Output: <nil>
}
