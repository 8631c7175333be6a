// Package archtest holds the test that keeps docs/ARCHITECTURE.md's
// package table and the import graph in step: every package is in the
// table, and none imports what its row says it must not know.
package archtest
