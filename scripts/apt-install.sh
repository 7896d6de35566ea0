#!/bin/sh
# Install Debian packages with apt, for every place that sets up what the
# tests need: make test-deps, proof-deps and test-systemd, and
# packaging/test-board.sh. One script, so each behaves the same way.
#
#   sh scripts/apt-install.sh [APT-OPTION...] PACKAGE...
#
# Options (words starting with -, such as --no-install-recommends) go to
# apt-get install. Runs apt-get as root, or through sudo otherwise.
#
# Policy: `apt-get update` failing is a WARNING, not the end. On a fresh
# Debian machine one index can fail while the rest are fine (a foreign
# architecture's index mid mirror sync: "File has unexpected size ...
# Mirror sync in progress?", exit 100), and the install still works from
# the indexes that did download. So the install decides: it runs with
# apt's own progress on the terminal, and if it fails this script names the
# packages that are missing and the command to run, and exits non-zero.
set -u

opts=""
pkgs=""
for a in "$@"; do
	case $a in
	-*) opts="$opts $a" ;;
	*) pkgs="$pkgs $a" ;;
	esac
done
pkgs=${pkgs# }
[ -n "$pkgs" ] || {
	echo "usage: apt-install.sh [APT-OPTION...] PACKAGE..." >&2
	exit 2
}

if [ "$(id -u)" = 0 ]; then
	sudo="" how="as root"
elif command -v sudo >/dev/null 2>&1; then
	sudo="sudo " how="through sudo"
else
	echo "ERROR: missing packages: $pkgs; installing them needs root, and there is no sudo. As root, run:" >&2
	echo "  apt-get update; apt-get install -y$opts $pkgs" >&2
	exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "ERROR: missing packages: $pkgs; there is no apt-get here: install them (these are Debian's names) with this system's package manager" >&2
	exit 1
fi

echo "installing: $pkgs (apt-get, $how)"
${sudo}apt-get update
rc=$?
if [ "$rc" != 0 ]; then
	echo "WARNING: apt-get update failed (exit $rc); some package lists may be stale or missing. Installing anyway: the install decides."
fi

# shellcheck disable=SC2086 # $opts and $pkgs are lists of words.
${sudo}env DEBIAN_FRONTEND=noninteractive apt-get install -y $opts $pkgs
rc=$?
if [ "$rc" != 0 ]; then
	echo "ERROR: apt-get install failed (exit $rc); still missing: $pkgs" >&2
	echo "Fix what apt says above, then run:" >&2
	echo "  ${sudo}apt-get update; ${sudo}apt-get install -y$opts $pkgs" >&2
	exit 1
fi
