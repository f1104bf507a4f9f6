package main

import "testing"

func TestTermText(t *testing.T) {
	for in, want := range map[string]string{
		"plain note":              "plain note",
		"red \x1b[31mtext\x1b[0m": `red \x1b[31mtext\x1b[0m`,
		"title \x1b]0;pwned\x07":  `title \x1b]0;pwned\a`,
		"tab\there":               `tab\there`,
		"csi \u009b2J":            `csi \u009b2J`,
		"rtl \u202eevil":          `rtl \u202eevil`,
		"bad \xff utf8":           `bad \ufffd utf8`,
		"ünïcødé ok":              "ünïcødé ok",
	} {
		if got := termText(in); got != want {
			t.Errorf("termText(%q) = %q, want %q", in, got, want)
		}
	}
}
