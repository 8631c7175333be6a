# toolhost — build, run and test. `make run` and `make test` are all a fresh
# clone needs (plus wabt for the WAT test fixtures: .ci/run installs it).

GO        ?= go
BIN       := bin/toolhost
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X main.version=$(VERSION)
TOOLS     := $(notdir $(wildcard tools-src/*))
PLUGINS   := $(TOOLS:%=plugins/%.wasm)
GOFILES   := $(shell find . -name '*.go' -not -path './.git/*')

.PHONY: all build plugins run test check bench fmt vet tidy race clean

all: build plugins

build: $(BIN)

$(BIN): $(GOFILES) go.mod go.sum
	$(GO) build -ldflags '$(LDFLAGS)' -o $@ ./cmd/toolhost

plugins: $(PLUGINS)

plugins/%.wasm: $(GOFILES) go.mod go.sum
	GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -o $@ ./tools-src/$*

run: build plugins
	$(BIN) serve --plugins ./plugins

test: build plugins
	$(GO) test ./...

race:
	$(GO) test -race ./...

bench: build plugins
	$(GO) test -run '^$$' -bench . -benchmem ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

vet:
	$(GO) vet ./...
	GOOS=wasip1 GOARCH=wasm $(GO) vet ./abi/... ./tools-src/...

tidy:
	$(GO) mod tidy
	git diff --exit-code go.mod go.sum

check: vet tidy race
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo 'gofmt needed'; exit 1; }

clean:
	rm -rf bin plugins/*.wasm
