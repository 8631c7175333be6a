module github.com/toolhost/toolhost/abi/guest

go 1.26
