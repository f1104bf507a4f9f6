package ratings

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var sampleRatings = []Rating{
	{User: 1, Item: 31, Rating: 2.5, Timestamp: 1260759144, TimeMS: 1260759144000},
	{User: 1, Item: 1029, Rating: 3, Timestamp: 1260759179, TimeMS: 1260759179000},
	{User: 7, Item: 10, Rating: 5, Timestamp: 881250949, TimeMS: 881250949000},
}

func TestDetectAndIngestFormats(t *testing.T) {
	csv := "userId,movieId,rating,timestamp\n1,31,2.5,1260759144\n1,1029,3.0,1260759179\n7,10,5.0,881250949\n"
	dat := "1::31::2.5::1260759144\n1::1029::3::1260759179\n7::10::5::881250949\n"
	udata := "1\t31\t2.5\t1260759144\n1\t1029\t3\t1260759179\n7\t10\t5\t881250949"
	crlf := func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }
	tests := []struct {
		name, file, text string
		gz               bool
		want             Format
	}{
		{"csv", "ratings.csv", csv, false, FormatCSV},
		{"csv crlf", "ratings.csv", crlf(csv), false, FormatCSV},
		{"csv gzip named .csv", "ratings.csv", csv, true, FormatCSV},
		{"csv crlf gzip", "ratings.csv.gz", crlf(csv), true, FormatCSV},
		{"csv bom", "ratings.csv", "\xEF\xBB\xBF" + csv, false, FormatCSV},
		{"dat", "ratings.dat", dat, false, FormatDat},
		{"dat crlf", "ratings.dat", crlf(dat), false, FormatDat},
		{"dat gzip", "ratings.dat.gz", dat, true, FormatDat},
		{"udata no final newline", "u.data", udata, false, FormatUData},
		{"udata crlf gzip", "u.data", crlf(udata) + "\r\n\r\n", true, FormatUData},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := DetectFormat([]byte(strings.TrimPrefix(tc.text, "\xEF\xBB\xBF")))
			if err != nil || f != tc.want {
				t.Fatalf("DetectFormat = %v, %v; want %v", f, err, tc.want)
			}
			dir := t.TempDir()
			data := []byte(tc.text)
			if tc.gz {
				data = gzipBytes(t, data)
			}
			src := writeFile(t, filepath.Join(dir, tc.file), data)
			dst := filepath.Join(dir, "out.parquet")
			st, err := Ingest(context.Background(), src, dst, IngestOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if st.Format != tc.want || st.Ratings != 3 || st.Users != 2 || st.Items != 3 ||
				st.MinTime != 881250949 || st.MaxTime != 1260759179 || st.Bytes != int64(len(tc.text)) {
				t.Errorf("stats %+v", st)
			}
			got, err := ReadAll[Rating](context.Background(), dst)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, sampleRatings) {
				t.Errorf("rows %v, want %v", got, sampleRatings)
			}
		})
	}
}

func TestDetectFormatErrors(t *testing.T) {
	for _, head := range []string{"", "\n1,2,3,4\n", "userId,movieId,rating\n", "1,2,3,4\n", "hello world"} {
		if f, err := DetectFormat([]byte(head)); err == nil {
			t.Errorf("DetectFormat(%q) = %v, want an error", head, f)
		}
	}
}

func TestIngestMalformed(t *testing.T) {
	head := "userId,movieId,rating,timestamp\r\n"
	good := "1,2,3.5,100\r\n"
	tests := []struct {
		name, text, want string
	}{
		{"rating", head + good + good + "1,2,x,100\r\n", "ratings.csv:4: field rating: "},
		{"user", head + "u,2,3.5,100\r\n", "ratings.csv:2: field userId: "},
		{"item overflow", head + good + "1,99999999999,3.5,100\r\n", "ratings.csv:3: field movieId: "},
		{"timestamp", head + good + "1,2,3.5,\r\n", "ratings.csv:3: field timestamp: "},
		{"nan", head + "1,2,NaN,100\r\n", "ratings.csv:2: field rating: not a finite number"},
		{"fields", head + good + "1,2,3.5\r\n", "ratings.csv:3: want 4 fields"},
		{"extra field", head + "1,2,3.5,100,7\r\n", "ratings.csv:2: want 4 fields"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			src := writeFile(t, filepath.Join(dir, "ratings.csv"), []byte(tc.text))
			_, err := Ingest(context.Background(), src, filepath.Join(dir, "out.parquet"), IngestOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
			if matches, _ := filepath.Glob(filepath.Join(dir, "out.parquet*")); len(matches) != 0 {
				t.Errorf("left %v behind", matches)
			}
		})
	}
	// Line numbers stay right across blocks.
	var b strings.Builder
	b.WriteString(head)
	for range 5000 {
		b.WriteString(good)
	}
	b.WriteString("1,2,3.5,1e\r\n")
	dir := t.TempDir()
	src := writeFile(t, filepath.Join(dir, "ratings.csv"), []byte(b.String()))
	_, err := Ingest(context.Background(), src, filepath.Join(dir, "out.parquet"), IngestOptions{Workers: 3, BlockBytes: 1000})
	var fe *FieldError
	if err == nil || !strings.Contains(err.Error(), "ratings.csv:5002: field timestamp") || !errors.As(err, &fe) {
		t.Fatalf("err = %v", err)
	}
}

func TestParseLine(t *testing.T) {
	tests := []struct {
		f    Format
		line string
		want Rating
	}{
		{FormatCSV, "1,2,0.5,3", Rating{1, 2, 0.5, 3, 0}},
		{FormatCSV, "1,2,4.25,3\r", Rating{1, 2, 4.25, 3, 0}},
		{FormatCSV, "1,2,.5,-3", Rating{1, 2, 0.5, -3, 0}},
		{FormatDat, "2147483647::2::10::1", Rating{2147483647, 2, 10, 1, 0}},
		{FormatUData, "3\t4\t1e0\t5", Rating{3, 4, 1, 5, 0}},
	}
	for _, tc := range tests {
		got, err := ParseLine(tc.f, []byte(tc.line))
		if err != nil || got != tc.want {
			t.Errorf("ParseLine(%v, %q) = %v, %v; want %v", tc.f, tc.line, got, err, tc.want)
		}
	}
}

// FuzzParseLine checks that the parser never panics, that the fast paths agree with strconv,
// and that a parsed rating prints back to a line that parses to the same rating.
func FuzzParseLine(f *testing.F) {
	for _, s := range []string{"1,2,3.5,4", "1::2::3::4", "1\t2\t3\t4", "1,2,x,4", "-1,2,10.5,4\r", "1,2,3.25,", "99999999999,1,1,1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		for _, format := range []Format{FormatCSV, FormatDat, FormatUData} {
			r, err := ParseLine(format, []byte(line))
			if err != nil {
				var fe *FieldError
				if !errors.As(err, &fe) {
					t.Fatalf("error %v is not a *FieldError", err)
				}
				continue
			}
			sep := string(format.sep())
			back := strings.Join([]string{itoa(int64(r.User)), itoa(int64(r.Item)), ftoa(r.Rating), itoa(r.Timestamp)}, sep)
			r2, err := ParseLine(format, []byte(back))
			if err != nil || r2 != r {
				t.Fatalf("%q -> %v -> %q -> %v, %v", line, r, back, r2, err)
			}
		}
	})
}

func FuzzParseRating(f *testing.F) {
	for _, s := range []string{"3.5", "0.5", "4", "12.5", "1.25", "9.9", ".5", "5.", "-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseRating([]byte(s))
		want, werr := strconvRating(s)
		if (err == nil) != (werr == nil) || got != want {
			t.Fatalf("parseRating(%q) = %v, %v; strconv gives %v, %v", s, got, err, want, werr)
		}
	})
}
