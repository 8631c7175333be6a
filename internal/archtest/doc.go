// Package archtest holds the test that keeps docs/ARCHITECTURE.md's
// package table and the import graph in step: every package is in the
// table, none imports what its row says it must not know, and the only
// packages outside internal/ and cmd/ are those its Public line lists.
package archtest
