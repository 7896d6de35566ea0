# vigil — build, run, test, cross-compile.
#
#   make run    the daemon on the simulated board with ./config.toml (no network needed)
#   make test   install what the tests need (mosquitto, rabbitmq-server, qemu-user-static, chromium, ...) and run every test
#   make test-board  boot the arm64 .deb on Debian under real systemd (qemu-system; mk/dist.mk)

GO       ?= go
BIN      ?= bin/vigil
# Computed once (:=), so a commit landing mid-build cannot mix stamps.
ifndef VERSION
VERSION := $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
endif
ifndef COMMIT
COMMIT := $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
endif
# The commit's date, not the build's: two builds of one commit are byte-identical.
ifndef BUILDDATE
BUILDDATE := $(shell TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ 2>/dev/null)
endif
LDFLAGS  := -s -w -buildid= -X main.version=$(VERSION) -X main.commit=$(COMMIT) -X main.buildDate=$(BUILDDATE)
GOFLAGS_BUILD := -trimpath -ldflags '$(LDFLAGS)'
export CGO_ENABLED := 0
# net/http without its bundled HTTP/2 (the standard library's own build tag,
# net/http/omithttp2.go). vigil never speaks HTTP/2: its client sets
# ForceAttemptHTTP2 false and the status page serves plain HTTP/1.1, so the
# bundle is dead code, and 590 KB of the arm64 binary (10.49 -> 9.90 MB).
# Exported through GOFLAGS so that every build and test here, the end-to-end
# tests' own `go build` included, runs the code that ships.
export GOFLAGS := -tags=nethttpomithttp2 $(GOFLAGS)

# Targets: name:GOARCH:GOARM
TARGETS := arm6:arm:6 arm7:arm:7 arm64:arm64: riscv64:riscv64: amd64:amd64:

.PHONY: all build run test test-deps test-qemu lint cross clean man

all: build

# Packaging, benchmarks and reliability targets live in mk/.
-include mk/*.mk

build:
	$(GO) build $(GOFLAGS_BUILD) -o $(BIN) ./cmd/vigil

run: build
	./$(BIN) -c config.toml run

# Test dependencies: a real mosquitto for the MQTT tests, qemu-user for the
# cross-architecture runs, headless chromium for the status page test and
# promtool (Debian's prometheus package) to check /metrics, tmux for the
# interactive vigil init test, tzdata for the zone names the tests use (the
# binary reads the system's zone database). Installed only
# when missing, by scripts/apt-install.sh (root or sudo, and apt; a failed
# `apt-get update` is a warning, the install decides). Debian's
# rabbitmq-server (3.10, with its MQTT plugin) is for the
# three-node cluster test alone: when apt cannot install it, that one test
# skips with one line and the rest runs.
test-deps:
	@missing=""; \
	command -v mosquitto >/dev/null 2>&1 || [ -x /usr/sbin/mosquitto ] || missing="$$missing mosquitto mosquitto-clients"; \
	command -v qemu-aarch64-static >/dev/null 2>&1 || missing="$$missing qemu-user-static"; \
	command -v chromium >/dev/null 2>&1 || missing="$$missing chromium"; \
	command -v promtool >/dev/null 2>&1 || missing="$$missing prometheus"; \
	command -v tmux >/dev/null 2>&1 || missing="$$missing tmux"; \
	[ -d /usr/share/zoneinfo ] || missing="$$missing tzdata"; \
	if [ -n "$$missing" ]; then sh scripts/apt-install.sh $$missing; fi
	@[ -x /usr/lib/rabbitmq/bin/rabbitmq-server ] || sh scripts/apt-install.sh --no-install-recommends rabbitmq-server || \
		echo "WARNING: rabbitmq-server could not be installed: the RabbitMQ cluster test will skip"

# Everything: unit, integration and end-to-end tests (a real mosquitto, real
# SIGKILLs), the hardware-facing packages under qemu for arm64/arm6/riscv64,
# the cross-built binaries smoke-tested under qemu, the systemd unit and the
# .deb packages, the short form of the reliability suite (power cuts
# against a real mosquitto, LLM and clock faults, hostile input) and of the
# fleet benchmark (5 daemons on one broker).
#
# Each long phase starts with an "== " line. go test prints each package's
# closing line (ok/FAIL) as it finishes; cmd/vigil, whose end-to-end tests
# run for minutes, goes on its own through scripts/testprogress, which
# prints its slow tests as they pass, every failure, and what still runs
# after 30 quiet seconds, then go test's own closing line. go test's own
# 10-minute default is too short for cmd/vigil on a slow CI machine (it took
# 585 s on an idle one): its timeout is 45 minutes, and a timeout names every
# test that was still running. Its long tests mostly wait (a heartbeat
# interval is at least a minute, a roll-call window 10 s), so eight run at
# once on two cores: 243 s on an idle machine, against 440 s with four and
# about 12 minutes with go test's default of two. The longest test
# (TestBaselineSIGKILL, two real 1-minute heartbeats, 175 s) is the floor.
test: test-deps lint
	@echo "== go test: every package but cmd/vigil"
	PATH="$$PATH:/usr/sbin" $(GO) test -count=1 -timeout 20m $$($(GO) list ./... | grep -v '/cmd/vigil$$')
	@echo "== go test: cmd/vigil (the end-to-end tests, about 4 minutes)"
	PATH="$$PATH:/usr/sbin" $(GO) run ./scripts/testprogress -count=1 -timeout 45m -parallel 8 ./cmd/vigil
	@echo "== qemu-user: the hardware-facing packages on arm64, arm6, riscv64"
	$(MAKE) --no-print-directory test-qemu
	@echo "== systemd unit"
	$(MAKE) --no-print-directory test-systemd
	@echo "== dist: the cross-built binaries under qemu-user"
	$(MAKE) --no-print-directory test-dist
	@echo "== deb: the packages, and a lifecycle in a scratch root"
	$(MAKE) --no-print-directory test-deb
	@echo "== board: the arm64 .deb on Debian under real systemd (qemu-system-aarch64; ~3 min, ~9 min the first time)"
	$(MAKE) --no-print-directory test-board
	@echo "== reliability (short)"
	$(MAKE) --no-print-directory reliability-short
	@echo "== fleet (short): 5 daemons on one broker"
	$(MAKE) --no-print-directory fleet-bench-short

# The hardware-facing packages under qemu-user for each target architecture.
QEMU_PKGS ?= ./device/... ./board/... ./rule/... ./store/... ./config/...
test-qemu:
	GOARCH=arm64 $(GO) test -count=1 -exec qemu-aarch64-static $(QEMU_PKGS)
	GOARCH=arm GOARM=6 $(GO) test -count=1 -exec qemu-arm-static $(QEMU_PKGS)
	GOARCH=riscv64 $(GO) test -count=1 -exec qemu-riscv64-static $(QEMU_PKGS)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

cross:
	@mkdir -p dist
	@for t in $(TARGETS); do \
		name=$${t%%:*}; rest=$${t#*:}; arch=$${rest%%:*}; arm=$${rest#*:}; \
		GOOS=linux GOARCH=$$arch GOARM=$$arm $(GO) build $(GOFLAGS_BUILD) -o dist/vigil-linux-$$name ./cmd/vigil || exit 1; \
		printf '%-28s %9d bytes\n' dist/vigil-linux-$$name $$(stat -c %s dist/vigil-linux-$$name); \
	done

# The vigil(1) man page, generated from the same text as `vigil help`
# (TestManPageUpToDate fails when it is stale).
man:
	$(GO) run ./cmd/vigil help --man > docs/vigil.1

clean:
	rm -rf bin dist
