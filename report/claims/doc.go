// Package claims computes the paper's claims table (Bamler and Mandt, ICML
// 2018) against our measurements: `runner claims` prints what Table
// returns.
//
// The rows are data: the [[claims]] tables of experiments.toml name a
// claim, the paper's words, the data, the experiment that tests it and a
// verdict kind with its parameters (Decode checks them strictly: an
// unknown kind, a missing or an unused parameter is a *experiment.ConfigError
// naming the line and key); [[claim_sections]] name the tables that follow
// it. A verdict kind is a Go function registered by name in kinds (a
// static table, resolved on first use: no init order matters). Every
// column but the paper's is computed from the latest ended run of the
// row's experiment at the settings the file defines (runs with --set
// overrides or older settings do not count), read from the first of
// several results databases that holds one (Stores).
//
// Invariants: the table depends only on the file and the databases (the
// bootstrap intervals draw from a fixed PCG seed); nothing here writes to
// a database.
package claims
