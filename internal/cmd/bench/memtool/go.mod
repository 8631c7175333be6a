module github.com/toolhost/toolhost/internal/cmd/bench/memtool

go 1.26.8

require github.com/toolhost/toolhost/abi/guest v0.0.0

// Test guests build from this repository's SDK (internal/testkit/testwasm).
replace github.com/toolhost/toolhost/abi/guest => ../../../../abi/guest
