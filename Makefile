# gvs — a userspace virtual switch in Go.
GO        ?= go
PKGS      ?= ./...
# Packages with goroutines sharing state; run under the race detector.
RACE_PKGS ?= ./datapath/...
FUZZTIME  ?= 10s
BENCHTIME ?= 1s

.PHONY: all build test test-short vet fmt-check race bench fuzz run demo clean

all: build

build:
	$(GO) build $(PKGS)

## test: everything CI runs (format, vet, unit + integration tests, race detector).
test: fmt-check vet
	$(GO) test -count=1 -timeout 25m $(PKGS)
	$(GO) test -count=1 -race -timeout 15m $(RACE_PKGS)

test-short:
	$(GO) test -short -count=1 $(PKGS)

vet:
	$(GO) vet $(PKGS)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

## bench: the datapath benchmarks with allocation counts.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./datapath/...

## fuzz: each fuzz target for a short, bounded time.
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

## run: start the switch (see README).
run:
	$(GO) run ./cmd/gvs-demo

demo: run

clean:
	$(GO) clean -testcache
