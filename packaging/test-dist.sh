#!/bin/sh
# Smoke test of the cross-built binaries (make test-dist, see mk/dist.mk).
#
# Each binary in $DIST_DIR runs under qemu-user pinned to the CPU of the
# oldest board it is meant for, so an instruction that board lacks kills it
# here as it would there: `vigil version`, `vigil config check` on the
# repository's config.toml and on the packaged one, and one
# `vigil check --dry-run` and one `vigil sensors` on the simulated board,
# with its state in a temporary directory and no network. It also checks that every binary is
# static, stripped, for the right machine and within the size budget, and,
# as a control, that the GOARM=7 binary does die on the ARMv6 CPU.
set -eu

: "${DIST_DIR:=dist}" "${DIST_MAX_BYTES:=11000000}" "${DIST_MAX_BYTES_ARM64:=10000000}"
: "${TARGETS:?name:GOARCH:GOARM list, from the Makefile}" "${VERSION:?}"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# emulator NAME prints the command that runs a binary of dist target NAME.
emulator() {
	case $1 in
	arm6) echo "qemu-arm-static -cpu arm1176" ;;         # Pi Zero/Zero W/1: ARM1176JZF-S, ARMv6
	arm7) echo "qemu-arm-static -cpu cortex-a7" ;;       # Pi 2: Cortex-A7, ARMv7
	arm64) echo "qemu-aarch64-static -cpu cortex-a53" ;; # Pi 3/Zero 2 W: Cortex-A53
	riscv64) echo "qemu-riscv64-static -cpu sifive-u54" ;; # RV64GC (rva20u64), like the VisionFive 2's U74
	amd64) [ "$(uname -m)" = x86_64 ] || echo "qemu-x86_64-static" ;;
	*) fail "no emulator known for dist target $1" ;;
	esac
}

# machine GOARCH prints readelf's name of the ELF machine.
machine() {
	case $1 in
	arm) echo ARM ;;
	arm64) echo AArch64 ;;
	riscv64) echo RISC-V ;;
	amd64) echo X86-64 ;;
	esac
}

# run NAME BIN ARGS... runs the binary of target NAME in the emulator, with
# nothing from the caller's environment that vigil reads.
run() {
	rname=$1 rbin=$2
	shift 2
	# shellcheck disable=SC2046 # the emulator command is meant to split
	(cd "$tmp" && env -u OPENAI_API_KEY -u ANTHROPIC_API_KEY -u VIGIL_CONFIG -u VIGIL_TELEGRAM_TOKEN \
		$(emulator "$rname") "$rbin" "$@")
}

over=""
readelf=$(command -v readelf || true)
[ -n "$readelf" ] || echo "note: no readelf; skipping the static/stripped/machine checks"

for t in $TARGETS; do
	name=${t%%:*} rest=${t#*:}
	arch=${rest%%:*} goarm=${rest#*:}
	bin=$(cd "$DIST_DIR" && pwd)/vigil-linux-$name
	[ -x "$bin" ] || fail "$bin missing: run make dist"
	emu=$(emulator "$name")
	if [ -n "$emu" ]; then
		command -v "${emu%% *}" >/dev/null 2>&1 || fail "${emu%% *} not found (make test-deps installs qemu-user-static)"
	fi

	# Over budget is reported at the end, after the smoke tests ran.
	size=$(stat -c %s "$bin") budget=$DIST_MAX_BYTES
	[ "$name" != arm64 ] || budget=$DIST_MAX_BYTES_ARM64
	[ "$size" -le "$budget" ] || over="$over
FAIL: $name: $size bytes, over its budget of $budget bytes"

	if [ -n "$readelf" ]; then
		! "$readelf" -lW "$bin" | grep -q 'Requesting program interpreter' || fail "$name: dynamically linked"
		! "$readelf" -SW "$bin" | grep -Eq '\.(symtab|debug_info)' || fail "$name: not stripped"
		"$readelf" -hW "$bin" | grep -q "Machine:.*$(machine "$arch")" || fail "$name: not a $(machine "$arch") binary"
	fi

	# vigil version: the stamped version and the architecture it was built for.
	out=$(run "$name" "$bin" version) || fail "$name: vigil version: exit $?"
	echo "$out" | grep -qx "vigil $VERSION" || fail "$name: version is not $VERSION: $out"
	echo "$out" | grep -q "linux/$arch" || fail "$name: not linux/$arch: $out"
	if [ -n "$goarm" ]; then
		echo "$out" | grep -q "GOARM=$goarm" || fail "$name: not GOARM=$goarm: $out"
	fi
	if [ "$arch" = riscv64 ]; then
		echo "$out" | grep -q "GORISCV64=rva20u64" || fail "$name: not GORISCV64=rva20u64: $out"
	fi

	# config check: the demo config (sim board) and the packaged one.
	dir=$tmp/$name
	mkdir -p "$dir"
	cp config.toml HEARTBEAT.md "$dir/"
	cp packaging/config.toml "$dir/packaged.toml"
	run "$name" "$bin" -c "$dir/config.toml" config check >"$dir/out" 2>&1 ||
		fail "$name: config check config.toml: exit $?: $(cat "$dir/out")"
	run "$name" "$bin" -c "$dir/packaged.toml" config check >"$dir/out" 2>&1 ||
		fail "$name: config check packaging/config.toml: exit $?: $(cat "$dir/out")"

	# One heartbeat on the simulated board, rules-only (no key, no network),
	# delivering nothing and writing nothing: a dry run creates no state.
	run "$name" "$bin" -c "$dir/config.toml" check --dry-run --json >"$dir/check.json" 2>"$dir/check.err" ||
		fail "$name: check --dry-run: exit $?: $(cat "$dir/check.err")"
	outcome=$(sed -n 's/.*"outcome": *"\([a-z_]*\)".*/\1/p' "$dir/check.json" | head -n 1)
	case $outcome in
	ok | alert | skipped) ;;
	*) fail "$name: check --dry-run outcome \"$outcome\": $(cat "$dir/check.json" "$dir/check.err")" ;;
	esac
	reason=$(sed -n 's/.*"reason": *"\([a-z_]*\)".*/\1/p' "$dir/check.json" | head -n 1)
	[ ! -e "$dir/.state" ] || fail "$name: check --dry-run created $dir/.state (a dry run writes nothing)"
	# A real one writes the state file, bbolt on this CPU.
	run "$name" "$bin" -c "$dir/config.toml" check --json >"$dir/check2.json" 2>"$dir/check2.err" ||
		fail "$name: check: exit $?: $(cat "$dir/check2.err")"
	[ -s "$dir/.state/vigil.db" ] || fail "$name: check left no state file in $dir/.state"

	# Every simulated sensor reads, through the same code as real ones.
	run "$name" "$bin" -c "$dir/config.toml" sensors --json >"$dir/sensors.json" 2>"$dir/sensors.err" ||
		fail "$name: sensors: exit $?: $(cat "$dir/sensors.err")"
	for key in air.temperature freezer.temperature board.uptime; do
		grep -q "\"$key\"" "$dir/sensors.json" || fail "$name: sensors --json has no $key: $(cat "$dir/sensors.json")"
	done

	printf '%-8s ok  %-38s %s; config check, sensors, check ok; check --dry-run: %s (%s), no state written\n' \
		"$name" "${emu:-native}" "$(echo "$out" | sed -n 4p)" "$outcome" "$reason"
done

# Control: the CPU pinning must have teeth. A GOARM=7 binary on the Pi Zero's
# ARMv6 core dies with SIGILL; if it ran, the arm6 pass above proves nothing.
case " $TARGETS " in
*" arm7:arm:7 "*)
	if qemu-arm-static -cpu arm1176 "$DIST_DIR/vigil-linux-arm7" version >/dev/null 2>&1; then
		fail "control: the GOARM=7 binary ran on an emulated ARM1176 (ARMv6)"
	fi
	echo "control  ok  GOARM=7 binary dies on the emulated ARM1176, as on a Pi Zero"
	;;
esac

if [ -n "$over" ]; then
	echo "$over" >&2
	exit 1
fi
