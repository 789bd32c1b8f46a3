# edged: build, test and check. `make help` lists the targets; the
# benchmarks' targets are in bench/bench.mk.

GO       ?= go
VERSION  := $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT   := $(shell git rev-parse HEAD 2>/dev/null)
DATE     := $(shell git log -1 --format=%cI 2>/dev/null)
STAMP    := -X main.version=$(VERSION) -X main.buildNumber=$(COMMIT) -X main.buildDate=$(DATE)
LDFLAGS  := -s -w $(STAMP)
# The version is stamped by -X above, so VCS stamping is not needed (it
# also fails in checkouts that git considers unsafe).
XBUILD   := CGO_ENABLED=0 $(GO) build -trimpath -buildvcs=false -ldflags "$(LDFLAGS)"
BIN      := bin
ARGS     ?=
FUZZTIME ?= 10s

# Robustness (test-robust): how long each attack of integration/robust
# runs; CI runs the short form.
ROBUST_WINDOW ?= 10s

.PHONY: all help build arm64 armv7 image-arm64 image-armv7 test-image run deps test test-arm test-race test-robust check-generate fuzz lint check-binaries clean

all: build

help:
	@echo "make build           host binary $(BIN)/edged"
	@echo "make run             build and start edged with the built-in simulator (ARGS='--listen :4841')"
	@echo "make arm64 armv7     static, stripped $(BIN)/edged-linux-arm64, $(BIN)/edged-linux-armv7"
	@echo "make deps            install the Debian packages the tests need (scripts/deps.sh)"
	@echo "make test            deps, then all tests"
	@echo "make test-arm        deps, then all tests for arm64 and armv7 under qemu"
	@echo "make image-arm64     the QEMU test image bin/image-arm64 (image-armv7: bin/image-armv7)"
	@echo "make test-image      boot both images in qemu-system-arm: serve, write, power cut, watchdog"
	@echo "make test-race       deps, then the tests of the packages with goroutines under the race detector ($(RACE_PKGS))"
	@echo "make test-robust     a real edged under each attack of integration/robust for ROBUST_WINDOW=$(ROBUST_WINDOW): RSS, scan, latency, admission"
	@echo "make check-generate  go generate ./... must leave the tree as committed"
	@echo "make fuzz            every fuzz target for FUZZTIME=$(FUZZTIME)"
	@echo "make lint            gofmt, go vet, no raw 64-bit sync/atomic calls"
	@echo "make check-binaries  static/arch/size/--version checks of the ARM binaries"
	@echo "make clean           remove $(BIN)/"
	@$(MAKE) --no-print-directory bench-help

# Static (no cgo), as the ARM binaries: no C library mapped, the pure-Go
# resolver and user lookups.
build:
	CGO_ENABLED=0 $(GO) build -buildvcs=false -ldflags "$(STAMP)" -o $(BIN)/edged ./cmd/edged

arm64:
	GOOS=linux GOARCH=arm64 $(XBUILD) -o $(BIN)/edged-linux-arm64 ./cmd/edged

armv7:
	GOOS=linux GOARCH=arm GOARM=7 $(XBUILD) -o $(BIN)/edged-linux-armv7 ./cmd/edged

# The QEMU test images (scripts/image.sh: Debian's ARM kernel and
# BusyBox, the gateway's overlay, the ARM binary) and their boot test.
image-arm64: arm64
	./scripts/image.sh arm64

image-armv7: armv7
	./scripts/image.sh armv7

IMAGE_ARCHS ?= arm64 armv7

test-image: deps build $(addprefix image-,$(IMAGE_ARCHS))
	IMAGE_ARCHS='$(IMAGE_ARCHS)' $(GO) test -tags image -count=1 -v -timeout 25m ./integration/image/

run: build
	./$(BIN)/edged --data-dir data --allow-insecure --anonymous-role Operator $(ARGS)

deps:
	@./scripts/deps.sh

# The test targets run go test through internal/testutil/testreport: go
# test's usual output, then the tests that were skipped, which are also
# appended to $(SKIPS) when set (.ci/run lists them at its end). A test
# whose peer (pymodbus, mbpoll, socat, node, a C compiler, ...) is missing
# skips, and fails when CI is set (internal/testutil/peer).
SKIPS    ?=
$(BIN)/testreport: $(wildcard internal/testutil/testreport/*.go)
	$(GO) build -o $@ ./internal/testutil/testreport
TESTREPORT = $(BIN)/testreport -skips '$(SKIPS)'

test: deps $(BIN)/testreport
	$(TESTREPORT) -- $(GO) test -count=1 ./...

# EDGED_TEST_EXEC: the emulator, for the tests that start their test binary
# again as a child process (the bench commands' load roles). The two
# architectures run side by side, each one's output printed when both
# ended: most of their time is cmd/edged's tests waiting on emulated
# processes (together they keep about half of two cores busy), so side by
# side they take about the longer one's time instead of the sum.
test-arm: deps $(BIN)/testreport
	@EDGED_TEST_EMULATED=1 EDGED_TEST_EXEC=qemu-aarch64-static CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(TESTREPORT) -- $(GO) test -count=1 -exec qemu-aarch64-static ./... > $(BIN)/test-arm64.log 2>&1 & a=$$!; \
	EDGED_TEST_EMULATED=1 EDGED_TEST_EXEC=qemu-arm-static CGO_ENABLED=0 GOOS=linux GOARCH=arm GOARM=7 $(TESTREPORT) -- $(GO) test -count=1 -exec qemu-arm-static ./... > $(BIN)/test-armv7.log 2>&1 & b=$$!; \
	echo "test-arm: arm64 and armv7 under qemu, side by side (output in $(BIN)/test-arm64.log and $(BIN)/test-armv7.log, printed when both ended)"; \
	wait $$a; ra=$$?; wait $$b; rb=$$?; \
	echo "== test-arm: arm64 (exit $$ra)"; cat $(BIN)/test-arm64.log; \
	echo "== test-arm: armv7 (exit $$rb)"; cat $(BIN)/test-armv7.log; \
	[ $$ra = 0 ] && [ $$rb = 0 ]

# The packages whose goroutines share state: the stack, the scan engine and
# its devices, the binding, the configuration service, the northbound and
# its MQTT client, and the in-process stack.
RACE_PKGS ?= ./opcua/... ./plc/... ./binding/... ./configsvc/... ./internal/... ./tsdb/... ./historian/... ./alarms/... ./northbound/... ./mqtt/... ./sparkplug/...

test-race: deps $(BIN)/testreport
	$(TESTREPORT) -- env CGO_ENABLED=1 $(GO) test -race -count=1 $(RACE_PKGS)

# The attacks run one after the other against a fresh edged each; the
# suite builds edged itself (build tag robust, so that `make test` and
# test-race leave it out).
test-robust: deps $(BIN)/testreport
	$(TESTREPORT) -v -- env ROBUST_WINDOW=$(ROBUST_WINDOW) $(GO) test -tags robust -count=1 -timeout 30m ./integration/robust/

# Generated files are committed; regenerating them from ../shared must
# change nothing (nor add a file).
check-generate:
	$(GO) generate ./...
	@changed=$$(git status --porcelain -- '*.go'); \
	if [ -n "$$changed" ]; then \
		echo "check-generate: go generate changed the tree (commit the generator's output, never edit it by hand):"; \
		echo "$$changed"; git diff --stat; exit 1; \
	fi

fuzz:
	FUZZTIME=$(FUZZTIME) ./scripts/fuzz.sh

lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$unformatted" ]; then \
		echo "gofmt: these files need formatting (run gofmt -w):"; echo "$$unformatted"; exit 1; \
	fi
	$(GO) vet ./...
	$(GO) vet -tags robust ./integration/robust/
	$(GO) vet -tags image ./integration/image/
	./scripts/check-atomics.sh

check-binaries: deps arm64 armv7
	./scripts/check-binaries.sh '$(VERSION)' $(BIN)

clean:
	rm -rf $(BIN)

include bench/bench.mk
