package corpus

import (
	"bytes"
	"context"
	"strconv"
	"testing"
)

// The parsers of corpus files take input from elsewhere: whatever the bytes,
// they return a result or an error, never panic or hang (.ci/fuzz.sh runs
// each target for a few seconds).

func FuzzScanCSVFields(f *testing.F) {
	f.Add([]byte("time,text\n1990,hello world\n1991,\"a, b\"\n"), "", "")
	f.Add([]byte("year,body,extra\n2001-03-04,a b,x\n"), "year", "body")
	f.Add([]byte("time,text\n\"unterminated\n"), "", "")
	f.Add([]byte{0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0}, "", "")
	f.Add([]byte{0x28, 0xb5, 0x2f, 0xfd}, "", "")
	f.Fuzz(func(t *testing.T, data []byte, timeCol, textCol string) {
		n := 0
		err := ScanCSVFields(context.Background(), bytes.NewReader(data), "f.csv", DocFields{Time: timeCol, Text: textCol}, func(Document) error {
			n++
			return nil
		})
		if err != nil && n > 0 && err.Error() == "" {
			t.Fatal("an empty error")
		}
	})
}

func FuzzParseTotals(f *testing.F) {
	f.Add([]byte("1790,100,10,1\t1791,200,20,2\n"))
	f.Add([]byte("1790 100 10 1\n1791 200 20 2\n"))
	f.Add([]byte("1790,100,10\n"))
	f.Add([]byte("x,1,2,3"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tot, err := ParseTotals(bytes.NewReader(data), "totals.txt")
		if err == nil {
			for _, y := range tot {
				if y.Match < 0 || y.Pages < 0 || y.Volumes < 0 {
					t.Fatalf("negative count accepted: %+v", y)
				}
			}
		}
	})
}

func FuzzParseYear(f *testing.F) {
	for _, s := range []string{"1790", " 2020 ", "1790-01-08", "1790-01-08T12:00:00Z", "-5", "x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		y, err := ParseYear(s)
		if err != nil {
			return
		}
		// A year parses back as itself.
		if y2, err := ParseYear(strconv.Itoa(y)); err != nil || y2 != y {
			t.Fatalf("ParseYear(%q) = %d, but ParseYear(%q) = %d, %v", s, y, strconv.Itoa(y), y2, err)
		}
	})
}
