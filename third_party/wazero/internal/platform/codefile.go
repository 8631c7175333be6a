package platform

// CodeFileAlign is the alignment of the code that a compilation cache
// entry places for MapCodeFile: 64 KiB, a multiple of every page size
// Go's targets use (4, 16 and 64 KiB), so one entry maps on any of them.
const CodeFileAlign = 64 << 10
