module github.com/toolhost/toolhost/tools-src

go 1.26.8

require (
	codeberg.org/readeck/go-readability/v2 v2.1.3
	github.com/JohannesKaufmann/html-to-markdown/v2 v2.5.2
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	github.com/toolhost/toolhost/abi/guest v0.0.0
	golang.org/x/net v0.59.0
)

require (
	github.com/JohannesKaufmann/dom v0.3.1 // indirect
	github.com/andybalholm/cascadia v1.3.4 // indirect
	github.com/go-shiori/dom v0.0.0-20230515143342-73569d674e1c // indirect
	github.com/gogs/chardet v0.0.0-20211120154057-b7413eaefb8f // indirect
	github.com/itlightning/dateparse v0.2.1 // indirect
	golang.org/x/text v0.42.0 // indirect
)

// The example tools are built from this repository's SDK, not a published
// version of it: a tool author's own go.mod needs no such line (see
// README.md, "Writing a tool", and host.TestToolFromOutsideModule).
replace github.com/toolhost/toolhost/abi/guest => ../abi/guest
