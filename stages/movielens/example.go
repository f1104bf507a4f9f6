package movielens

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"time"

	"goldstone/internal/atomicfile"
)

// ExampleRatingsFile is the name of the example ratings table (WriteExampleRatings) under
// the examples folder (runner example-data).
const ExampleRatingsFile = "ratings-own.csv"

// The example table: users and items with a planted two-dimensional taste whose user half
// turns slowly over the two years, rated on a 1-5 star scale.
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
	angle := make([]float64, exampleUsers) // a user's taste turns by drift over the span
	drift := make([]float64, exampleUsers)
	for u := range angle {
		angle[u] = 2 * math.Pi * rng.Float64()
		drift[u] = 0.5 * math.Pi * (rng.Float64() - 0.5)
	}
	itemAngle := make([]float64, exampleItems)
	for i := range itemAngle {
		itemAngle[i] = 2 * math.Pi * rng.Float64()
	}
	days := int(exampleFirstDay.AddDate(2, 0, 0).Sub(exampleFirstDay).Hours() / 24)
	if _, err := io.WriteString(w, "item,user,stars,date\n"); err != nil {
		return err
	}
	for range exampleN {
		u, i, d := rng.IntN(exampleUsers), rng.IntN(exampleItems), rng.IntN(days)
		a := angle[u] + drift[u]*float64(d)/float64(days)
		score := 3 + 2*math.Cos(a-itemAngle[i]) + 0.8*rng.NormFloat64()
		stars := max(1, min(5, int(math.Round(score))))
		date := exampleFirstDay.AddDate(0, 0, d).Format("2006-01-02")
		if _, err := fmt.Fprintf(w, "%s,%s,%d,%s\n", item(i), user(u), stars, date); err != nil {
			return err
		}
	}
	return nil
}
