// Package settings is the settings language of the pipelines: a stage
// declares what it reads as a struct whose field tags give each setting's
// name, default, check and doc; the config decoder (stages) checks values
// against the specs derived from those tags (SpecsOf) and resolves them
// into Values; a stage reads them back only through its struct (Decode,
// MustDecode), and its cache parameters are the struct's Keys.
//
// Files: spec.go (Kind, Spec, the checks, Values, FormatValue, Encode),
// typed.go (the tags, SpecsOf, Decode, Keys, Defaulter), choices.go (the
// registry of choice settings: an interface field names one of the
// structs registered for it), seed.go (Seeded, the setting every trial
// has).
//
// Invariants:
//   - Nothing reads a setting by its name outside this package: a typo in
//     a name would be a silent zero, a typo in a field is a compile error
//     (TestNoSettingReadByName in stages checks the whole module).
//   - A struct's Keys are exactly the settings it reads: the options of a
//     choice not made are absent, so they are in no cache key.
//   - Registries resolve after every init has run and freeze on their
//     first read (Choices): registration order never changes a result.
package settings
