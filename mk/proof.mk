# Proof: benchmarks, reliability and fuzzing (issues 7 and 11; included by
# the Makefile).
#
#   make bench              measure vigil and write BENCHMARKS.md (~10 min;
#                           the long runs of the memory knobs go alongside)
#   make reliability        power cuts, broker outage, LLM faults, clock
#                           faults, a simulated year, hostile input; writes
#                           RELIABILITY.md (~30 min)
#   make reliability-short  the short form for make test (~2 min); its report
#                           goes to bin/RELIABILITY-short.md
#   make fuzz               every Fuzz target for FUZZTIME each
#
# The driver is scripts/proof (go run ./scripts/proof -h); every figure in
# the two reports comes from its run. It needs mosquitto, strace and
# qemu-user-static, installed here when missing (scripts/apt-install.sh).

# Rules here must not become the default goal.
proof_mk_default_goal := $(.DEFAULT_GOAL)

FUZZTIME ?= 30s
# The full reliability run's fuzzing time per target.
RELIABILITY_FUZZTIME ?= 10s
PROOF ?= $(GO) run ./scripts/proof

.PHONY: bench reliability reliability-short fuzz proof-deps

proof-deps:
	@missing=""; \
	command -v mosquitto >/dev/null 2>&1 || [ -x /usr/sbin/mosquitto ] || missing="$$missing mosquitto"; \
	command -v mosquitto_sub >/dev/null 2>&1 || missing="$$missing mosquitto-clients"; \
	command -v strace >/dev/null 2>&1 || missing="$$missing strace"; \
	command -v qemu-aarch64-static >/dev/null 2>&1 || missing="$$missing qemu-user-static"; \
	if [ -n "$$missing" ]; then sh scripts/apt-install.sh $$missing; fi

bench: proof-deps build cross
	PATH="$$PATH:/usr/sbin" $(PROOF) bench -bin $(BIN) -dist dist -o BENCHMARKS.md

reliability: proof-deps build
	PATH="$$PATH:/usr/sbin" $(PROOF) reliability -bin $(BIN) -fuzztime $(RELIABILITY_FUZZTIME) -o RELIABILITY.md

reliability-short: proof-deps build
	@mkdir -p $(dir $(BIN))
	PATH="$$PATH:/usr/sbin" $(PROOF) reliability -short -bin $(BIN) -o $(dir $(BIN))RELIABILITY-short.md

fuzz:
	$(PROOF) fuzz -fuzztime $(FUZZTIME)

.DEFAULT_GOAL := $(proof_mk_default_goal)
