package expctxkeys

// SnapshotPrepareKey is a context.Context Value key (toolhost's patch): an
// instance made with it set can be snapshot after its start functions.
type SnapshotPrepareKey struct{}

// SnapshotRestoreKey is a context.Context Value key (toolhost's patch):
// its value, a *wasm.SnapshotRestore, says which snapshot is restored into
// the instance in place of its data segments and start functions.
type SnapshotRestoreKey struct{}
