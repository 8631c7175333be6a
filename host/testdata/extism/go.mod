module github.com/toolhost/toolhost/host/testdata/extism

go 1.26

require github.com/extism/go-pdk v1.1.3
