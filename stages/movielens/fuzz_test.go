package movielens

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// The parsers of ratings tables and their settings take input from
// elsewhere: whatever they get, they return a result or an error, never
// panic (.ci/fuzz.sh runs each target for a few seconds).

func FuzzParseMD5(f *testing.F) {
	f.Add("MD5 (ml-latest-small.zip) = 0123456789abcdef0123456789ABCDEF\n", "ml-latest-small.zip")
	f.Add("0123456789abcdef0123456789abcdef  ml-latest-small.zip\n", "ml-latest-small.zip")
	f.Add("0123456789abcdef0123456789abcdef\n", "x.zip")
	f.Add("garbage", "x.zip")
	f.Fuzz(func(t *testing.T, text, file string) {
		sum, err := ParseMD5(text, file)
		if err != nil {
			return
		}
		if len(sum) != 32 || strings.ToLower(sum) != sum || strings.Trim(sum, "0123456789abcdef") != "" {
			t.Fatalf("ParseMD5 = %q: want 32 lower-case hex digits", sum)
		}
	})
}

func FuzzReadRatingsText(f *testing.F) {
	f.Add([]byte("userId,movieId,rating,timestamp\n1,1,4.0,964982703\n1,3,4.5,964981247\n"))
	f.Add([]byte("1::1193::5::978300760\n1::661::3::978302109\n"))
	f.Add([]byte("1\t1\t5\t874965758\n"))
	f.Add([]byte("userId,movieId,rating,timestamp\n1,1,NaN,1\n"))
	f.Add([]byte("userId,movieId,rating,timestamp\n1,1,4.0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rs, err := ReadRatingsText("ratings.csv", bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, r := range rs {
			if math.IsNaN(float64(r.Rating)) || math.IsInf(float64(r.Rating), 0) {
				t.Fatalf("rating %v accepted", r.Rating)
			}
		}
	})
}
