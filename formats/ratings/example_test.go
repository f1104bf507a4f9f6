package ratings_test

import (
	"fmt"

	"goldstone/formats/ratings"
)

func ExampleParseLine() {
	r, err := ratings.ParseLine(ratings.FormatCSV, []byte("1,31,2.5,1260759144\r"))
	fmt.Println(r, err)
	_, err = ratings.ParseLine(ratings.FormatDat, []byte("1::31::x::1260759144"))
	fmt.Println(err)
	// Output:
	// {1 31 2.5 1260759144 0} <nil>
	// field rating: "x" is not a number
}
