//go:build !unix && !windows

package oci

import "os"

// lockFile does nothing where there is no file lock (wasip1, plan9):
// concurrent pulls there can lose each other's lock entries.
func lockFile(*os.File) error { return nil }

func unlockFile(*os.File) error { return nil }
