# A fleet on one broker (issue 16; included by the Makefile).
#
#   make fleet-bench        FLEET_N (default 1000) real `vigil run` processes
#                           on the sim board, one mosquitto, a fake LLM
#                           (120 of them first on their own, for the LLM
#                           load); writes FLEET.md
#   make fleet-bench-short  5 devices and short phases, for make test
#                           (~80 s); its report goes to bin/FLEET-short.md
#
# The driver is `go run ./scripts/proof fleet -h`.

fleet_mk_default_goal := $(.DEFAULT_GOAL)

FLEET_N ?= 1000

.PHONY: fleet-bench fleet-bench-short

fleet-bench: proof-deps build
	PATH="$$PATH:/usr/sbin" $(PROOF) fleet -bin $(BIN) -n $(FLEET_N) -o FLEET.md

fleet-bench-short: proof-deps build
	@mkdir -p $(dir $(BIN))
	PATH="$$PATH:/usr/sbin" $(PROOF) fleet -short -bin $(BIN) -o $(dir $(BIN))FLEET-short.md

.DEFAULT_GOAL := $(fleet_mk_default_goal)
