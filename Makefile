# gvs — a userspace virtual switch in Go.
GO        ?= go
PKGS      ?= ./...
# Packages with goroutines sharing state; run under the race detector.
RACE_PKGS ?= ./datapath/... ./ovsdb/... ./cmd/appctl/... ./ofproto/...
FUZZTIME  ?= 10s
# Each fuzz target also runs this long in `make test` (CI), beyond its seeds.
CI_FUZZTIME ?= 2s
BENCHTIME ?= 1s

.PHONY: all build deps test test-short vet fmt-check race bench fuzz run demo clean
RUNDIR    ?= $(CURDIR)/run

all: build

build:
	$(GO) build $(PKGS)

## deps: the Debian packages the tests use as real peers (apt-get, if missing).
deps:
	./scripts/install-deps.sh

## test: everything CI runs (packages, format, vet, unit + integration tests, race detector).
test: deps fmt-check vet
	$(GO) test -count=1 -timeout 25m $(PKGS)
	$(GO) test -count=1 -race -timeout 15m $(RACE_PKGS)
	$(MAKE) --no-print-directory fuzz FUZZTIME=$(CI_FUZZTIME)

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
	GO=$(GO) FUZZTIME=$(FUZZTIME) ./scripts/fuzz.sh

## run: the switch in the foreground, embedded OVSDB in $(RUNDIR).
run:
	$(GO) build -o bin/gvs-vswitchd ./cmd/gvs-vswitchd
	mkdir -p $(RUNDIR)
	OVS_RUNDIR=$(RUNDIR) OVS_DBDIR=$(RUNDIR) OVS_LOGDIR=$(RUNDIR) ./bin/gvs-vswitchd --log-file

## demo: two namespaces pinging through gvs-vswitchd (needs root and ovs-vsctl).
demo:
	$(GO) build -o bin/gvs-vswitchd ./cmd/gvs-vswitchd
	./scripts/demo.sh

clean:
	$(GO) clean -testcache
