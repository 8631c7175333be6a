//go:build !wasip1

package guest

func planExport(int32, int32) int64 {
	panic("guest.PlanExport works only in a WebAssembly (wasip1) build")
}
