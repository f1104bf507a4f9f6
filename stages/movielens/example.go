package movielens

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"time"

	"goldstone/experiment"
	"goldstone/internal/atomicfile"
	"goldstone/optim"
)

// ExampleRatingsFile is the name of the example ratings table (WriteExampleRatings) under
// the examples folder (runner example-data).
const ExampleRatingsFile = "ratings-own.csv"

// The example table: users and items with a planted two-dimensional taste whose user half
// moves over the two years, rated on a 1-5 star scale.
const (
	exampleUsers = 60
	exampleItems = 80
	exampleN     = 6000
)

var exampleFirstDay = time.Date(2019, 1, 1, 0, 0, 0, 0, time.UTC)

// WriteExampleRatings writes the example ratings table of experiments.toml's
// example-own-ratings: a CSV in a layout of its own (header item,user,stars,date; text ids,
// some quoted with a comma inside; ISO dates over 2019-2020). The content depends on
// nothing but this code (a fixed seed).
func WriteExampleRatings(path string) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		if err := exampleRatings(bw); err != nil {
			return err
		}
		return bw.Flush()
	})
}

func exampleRatings(w io.Writer) error {
	rng := rand.New(rand.NewPCG(2018, 20))
	names := []string{"ada", "ben", "cleo", "dev", "eli", "fay"}
	user := func(u int) string { return fmt.Sprintf("%s-%02d", names[u%len(names)], u) }
	item := func(i int) string {
		if i%10 == 3 {
			return fmt.Sprintf("\"Film %d, director's cut\"", i)
		}
		return fmt.Sprintf("film-%02d", i)
	}
	// Tastes are points of the square [-1, 1]^2; a user's moves in a straight line
	// from its first to its last over the two years.
	// (From integers: the compiler may fuse Float64's scaling into a subtraction.)
	coord := func() float64 { return float64(rng.IntN(2001)-1000) / 1000 }
	point := func() [2]float64 { return [2]float64{coord(), coord()} }
	from, to := make([][2]float64, exampleUsers), make([][2]float64, exampleUsers)
	for u := range from {
		from[u], to[u] = point(), point()
	}
	items := make([][2]float64, exampleItems)
	for i := range items {
		items[i] = point()
	}
	days := int(exampleFirstDay.AddDate(2, 0, 0).Sub(exampleFirstDay).Hours() / 24)
	if _, err := io.WriteString(w, "item,user,stars,date\n"); err != nil {
		return err
	}
	for range exampleN {
		u, i, d := rng.IntN(exampleUsers), rng.IntN(exampleItems), rng.IntN(days)
		f := float64(d) / float64(days)
		var dot float64
		for k := range 2 { // products rounded before they are added: the same bits on every build
			taste := float64(from[u][k]*(1-f)) + float64(to[u][k]*f)
			dot += float64(taste * items[i][k])
		}
		score := 3 + float64(2.5*dot) + float64(0.8*optim.NormFloat64(rng))
		stars := max(1, min(5, int(math.Round(score))))
		date := exampleFirstDay.AddDate(0, 0, d).Format("2006-01-02")
		if _, err := fmt.Fprintf(w, "%s,%s,%d,%s\n", item(i), user(u), stars, date); err != nil {
			return err
		}
	}
	return nil
}

// ExampleFiles implements experiment.Exampler: the ratings table of
// example-own-ratings and example-explicit-ratings.
func (Pipeline) ExampleFiles() []experiment.ExampleFile {
	return []experiment.ExampleFile{{Name: ExampleRatingsFile, Write: WriteExampleRatings,
		What: "a ratings table of its own layout (item,user,stars,date; text ids, ISO dates)"}}
}
