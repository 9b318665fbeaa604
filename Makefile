# gvs — a userspace virtual switch in Go.
GO        ?= go
PKGS      ?= ./...
# Packages with goroutines sharing state; run under the race detector.
RACE_PKGS ?= ./datapath/... ./ovsdb/... ./unixctl/... ./cmd/appctl/... ./ofproto/... ./vswitchd/heapgoal/...
FUZZTIME  ?= 10s
# Each fuzz target also runs this long in `make test` (CI), beyond its seeds.
CI_FUZZTIME ?= 2s
BENCHTIME ?= 1s

.PHONY: all build bins install uninstall deb deps test test-short vet fmt-check race bench fuzz run demo clean
RUNDIR    ?= $(CURDIR)/run

# The four commands, installed as Open vSwitch installs its own: the
# daemon in sbin, the tools in bin.
DAEMON    := gvs-vswitchd
TOOLS     := gvs-ofctl gvs-vsctl gvs-appctl
PREFIX    ?= /usr/local
DESTDIR   ?=
BINDIR    ?= $(PREFIX)/bin
SBINDIR   ?= $(PREFIX)/sbin
MANDIR    ?= $(PREFIX)/share/man
DATADIR   ?= $(PREFIX)/share/gvs
UNITDIR   ?= $(PREFIX)/lib/systemd/system
# LIBEXECDIR holds the link named ovs-vswitchd that the drop-in for
# Debian's ovs-vswitchd.service runs (packaging/systemd/).
LIBEXECDIR ?= $(PREFIX)/lib/gvs

# One version for every binary: the release in internal/version, or the
# git tag vX.Y.Z at HEAD, else the release plus the commit's date and hash
# (a valid Debian version: 0.1.0+git20261204.a2197ad).
VERSION_BASE := $(shell sed -n 's/^const Base = "\(.*\)"/\1/p' internal/version/version.go)
GIT_TAG      := $(shell git describe --tags --exact-match --match 'v[0-9]*' 2>/dev/null | sed 's/^v//')
GIT_REV      := $(shell git rev-parse --short=7 HEAD 2>/dev/null)
GIT_DATE     := $(shell git log -1 --format=%cd --date=format:%Y%m%d 2>/dev/null)
VERSION   ?= $(or $(GIT_TAG),$(if $(GIT_REV),$(VERSION_BASE)+git$(GIT_DATE).$(GIT_REV),$(VERSION_BASE)))
LDFLAGS   := -X github.com/gvs-project/gvs/internal/version.build=$(VERSION)
# DEBARCH is the .deb's architecture; DEBDIR where `make deb` leaves it.
DEBARCH   ?= $(shell $(GO) env GOARCH)
DEBDIR    ?= $(CURDIR)/dist

SUBST = sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@LIBEXECDIR@|$(LIBEXECDIR)|g'

all: build

## build: checks that every package builds, and leaves the four commands in bin/.
build: bins
	$(GO) build $(PKGS)

bins:
	$(GO) build -ldflags '$(LDFLAGS)' -o bin/ ./cmd/$(DAEMON) $(addprefix ./cmd/,$(TOOLS))

## install: the commands, man pages and systemd units under $(DESTDIR)$(PREFIX).
install: bins
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man8 \
		$(DESTDIR)$(UNITDIR) $(DESTDIR)$(DATADIR)/ovs-vswitchd.service.d $(DESTDIR)$(LIBEXECDIR)
	install -m 0755 bin/$(DAEMON) $(DESTDIR)$(SBINDIR)/
	install -m 0755 $(addprefix bin/,$(TOOLS)) $(DESTDIR)$(BINDIR)/
	install -m 0644 packaging/man/*.8 $(DESTDIR)$(MANDIR)/man8/
	ln -sf $(SBINDIR)/$(DAEMON) $(DESTDIR)$(LIBEXECDIR)/ovs-vswitchd
	$(SUBST) packaging/systemd/gvs-vswitchd.service.in > $(DESTDIR)$(UNITDIR)/gvs-vswitchd.service
	$(SUBST) packaging/systemd/ovs-vswitchd.service.d/gvs.conf.in > $(DESTDIR)$(DATADIR)/ovs-vswitchd.service.d/gvs.conf
	chmod 0644 $(DESTDIR)$(UNITDIR)/gvs-vswitchd.service $(DESTDIR)$(DATADIR)/ovs-vswitchd.service.d/gvs.conf

uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/$(DAEMON) $(addprefix $(DESTDIR)$(BINDIR)/,$(TOOLS)) \
		$(addprefix $(DESTDIR)$(MANDIR)/man8/,$(DAEMON).8 $(addsuffix .8,$(TOOLS))) \
		$(DESTDIR)$(UNITDIR)/gvs-vswitchd.service $(DESTDIR)$(LIBEXECDIR)/ovs-vswitchd \
		$(DESTDIR)$(DATADIR)/ovs-vswitchd.service.d/gvs.conf

## deb: dist/gvs_VERSION_ARCH.deb and dist/gvs-ovs-vswitchd_VERSION_ARCH.deb
## (the optional package that makes /usr/sbin/ovs-vswitchd gvs through
## update-alternatives), built by nfpm (a Go tool of this module: no
## dpkg-dev needed).
deb:
	rm -rf $(DEBDIR)/root $(DEBDIR)/scripts && mkdir -p $(DEBDIR)/scripts
	$(MAKE) --no-print-directory install DESTDIR=$(DEBDIR)/root PREFIX=/usr UNITDIR=/lib/systemd/system
	gzip -9nf $(DEBDIR)/root/usr/share/man/man8/*.8
	install -D -m 0644 packaging/default/gvs-vswitchd $(DEBDIR)/root/etc/default/gvs-vswitchd
	install -D -m 0644 packaging/deb/gvs-ovs-vswitchd.README $(DEBDIR)/root/usr/share/doc/gvs-ovs-vswitchd/README
	install -m 0755 packaging/deb/*.postinst packaging/deb/*.prerm packaging/deb/*.postrm $(DEBDIR)/scripts/
	nfpm=$$($(GO) tool -n nfpm) && for p in gvs gvs-ovs-vswitchd; do \
		(cd $(DEBDIR) && VERSION=$(VERSION) DEBARCH=$(DEBARCH) \
			$$nfpm package --packager deb --config $(CURDIR)/packaging/deb/$$p.yaml --target $(DEBDIR)/) || exit 1; \
	done
	rm -rf $(DEBDIR)/root $(DEBDIR)/scripts
	@ls -1 $(DEBDIR)/*.deb

## deps: the Debian packages the tests use as real peers (apt-get, if missing).
deps:
	./scripts/install-deps.sh

## test: everything CI runs (packages, format, vet, unit + integration tests, race detector).
test: deps fmt-check vet
	$(GO) test -count=1 -timeout 15m $(PKGS)
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
run: bins
	mkdir -p $(RUNDIR)
	OVS_RUNDIR=$(RUNDIR) OVS_DBDIR=$(RUNDIR) OVS_LOGDIR=$(RUNDIR) ./bin/gvs-vswitchd --log-file

## demo: two namespaces pinging through gvs-vswitchd (needs root and ovs-vsctl).
demo: bins
	./scripts/demo.sh

clean:
	$(GO) clean -testcache
	rm -rf bin $(DEBDIR)
