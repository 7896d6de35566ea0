#!/bin/sh
# Check the .deb packages (make test-deb, see mk/dist.mk).
#
# Every .deb: control fields, file list with owners and modes, conffiles,
# maintainer scripts, and that it carries exactly the dist/ binary it should
# (the armhf one the GOARM=6 build) and the repository's unit file.
#
# The package for this machine's architecture then goes through its whole
# life in a scratch root (a merged-/usr tree with a shell, where systemctl,
# systemd-sysusers, udevadm and modprobe are stand-ins that log their
# arguments): install, config check with the installed binary and config,
# upgrade over local edits and state, remove, purge. Maintainer scripts run
# chrooted into the scratch root, never on this machine (never --force-all:
# it implies --force-script-chrootless). That part needs root; without it
# the layout is checked from `dpkg-deb -x` alone.
set -eu

: "${DIST_DIR:=dist}" "${GO:=go}"
: "${DEB_VERSION:?}" "${DEB_TARGETS:?dist-name:debian-arch list, from mk/dist.mk}"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

command -v dpkg-deb >/dev/null 2>&1 || {
	echo "SKIP test-deb: no dpkg-deb here"
	exit 0
}

# Every file the package must ship, with its mode (owner root/root).
expected='-rwxr-xr-x ./usr/bin/vigil
-rw-r--r-- ./lib/systemd/system/vigil.service
-rw-r--r-- ./usr/lib/sysusers.d/vigil.conf
-rw-r--r-- ./lib/udev/rules.d/60-vigil.rules
-rw-r--r-- ./usr/lib/modules-load.d/vigil.conf
-rw-r--r-- ./etc/vigil/config.toml
-rw-r--r-- ./etc/vigil/HEARTBEAT.md
-rw-r--r-- ./usr/share/doc/vigil/copyright
-rw-r--r-- ./usr/share/doc/vigil/install.md
-rw-r--r-- ./usr/share/doc/vigil/README.md
-rw-r--r-- ./usr/share/doc/vigil/configuration.md
-rw-r--r-- ./usr/share/doc/vigil/operations.md
-rw-r--r-- ./usr/share/doc/vigil/llm.md
-rw-r--r-- ./usr/share/doc/vigil/fleet.md
-rw-r--r-- ./usr/share/doc/vigil/alerts.md
-rw-r--r-- ./usr/share/doc/vigil/hardware.md
-rw-r--r-- ./usr/share/doc/vigil/config.toml.example
-rw-r--r-- ./usr/share/man/man1/vigil.1.gz'

for t in $DEB_TARGETS; do
	name=${t%%:*} darch=${t#*:}
	deb=$DIST_DIR/vigil_${DEB_VERSION}-1_${darch}.deb
	[ -f "$deb" ] || fail "$deb missing: run make deb"

	[ "$(dpkg-deb --field "$deb" Package)" = vigil ] || fail "$deb: Package is not vigil"
	[ "$(dpkg-deb --field "$deb" Version)" = "$DEB_VERSION-1" ] || fail "$deb: Version is not $DEB_VERSION-1"
	[ "$(dpkg-deb --field "$deb" Architecture)" = "$darch" ] || fail "$deb: Architecture is not $darch"

	dpkg-deb --contents "$deb" >"$tmp/contents"
	echo "$expected" | while read -r mode path; do
		awk -v m="$mode" -v p="$path" '$1 == m && $2 == "root/root" && $6 == p { found = 1 } END { exit !found }' "$tmp/contents" ||
			fail "$deb: no $path with mode $mode owned by root/root: $(grep -F " $path" "$tmp/contents" || echo absent)"
	done
	files=$(grep -vc '^d' "$tmp/contents")
	[ "$files" -eq "$(echo "$expected" | wc -l)" ] || fail "$deb: $files files, expected exactly: $expected"

	# HTTPS (LLM, Telegram, mqtts://, wss://) needs the CA bundle.
	dpkg-deb --info "$deb" | grep -Eq '^ Depends: (.*, )?ca-certificates(,|$| )' ||
		fail "$deb: dpkg-deb -I shows no Depends: ca-certificates: $(dpkg-deb --info "$deb" | grep Depends || echo none)"
	dpkg-deb --info "$deb" | grep -Eq '^ Depends: (.*, )?tzdata(,|$| )' ||
		fail "$deb: dpkg-deb -I shows no Depends: tzdata: $(dpkg-deb --info "$deb" | grep Depends || echo none)"
	# The man page is docs/vigil.1, gzipped; the docs are the repository's.
	dpkg-deb --fsys-tarfile "$deb" | tar -xOf - ./usr/share/man/man1/vigil.1.gz | gzip -dc | cmp -s - docs/vigil.1 ||
		fail "$deb: /usr/share/man/man1/vigil.1.gz is not docs/vigil.1"
	for d in README.md alerts.md hardware.md install.md configuration.md operations.md llm.md fleet.md; do
		src=docs/$d
		[ "$d" = README.md ] && src=README.md
		dpkg-deb --fsys-tarfile "$deb" | tar -xOf - "./usr/share/doc/vigil/$d" | cmp -s - "$src" ||
			fail "$deb: /usr/share/doc/vigil/$d is not $src"
	done

	rm -rf "$tmp/ctl"
	dpkg-deb --control "$deb" "$tmp/ctl"
	printf '/etc/vigil/HEARTBEAT.md\n/etc/vigil/config.toml\n' | cmp -s - "$tmp/ctl/conffiles" ||
		fail "$deb: conffiles are not config.toml and HEARTBEAT.md: $(cat "$tmp/ctl/conffiles")"
	for s in postinst prerm postrm; do
		[ -x "$tmp/ctl/$s" ] || fail "$deb: no executable $s"
		cmp -s "$tmp/ctl/$s" "packaging/$s" || fail "$deb: $s differs from packaging/$s"
	done

	dpkg-deb --fsys-tarfile "$deb" | tar -xOf - ./usr/bin/vigil | cmp -s - "$DIST_DIR/vigil-linux-$name" ||
		fail "$deb: /usr/bin/vigil is not $DIST_DIR/vigil-linux-$name"
	dpkg-deb --fsys-tarfile "$deb" | tar -xOf - ./lib/systemd/system/vigil.service | cmp -s - systemd/vigil.service ||
		fail "$deb: the unit is not systemd/vigil.service"

	printf '%-60s ok  %9d bytes, Installed-Size %s KiB, /usr/bin/vigil = vigil-linux-%s\n' \
		"$deb" "$(stat -c %s "$deb")" "$(dpkg-deb --field "$deb" Installed-Size)" "$name"
done

# Every Go module linked into the binary is named in the copyright file.
for m in $("$GO" version -m "$DIST_DIR/vigil-linux-amd64" | awk '$1 == "dep" { print $2 }'); do
	grep -qF "$m" packaging/copyright || fail "packaging/copyright does not name $m, which is linked into vigil"
done
echo "copyright  ok  names every module linked into the binary"

# The lifecycle, for the package this machine can run.
hostarch=$(dpkg --print-architecture 2>/dev/null || echo none)
deb=$DIST_DIR/vigil_${DEB_VERSION}-1_${hostarch}.deb
[ -f "$deb" ] || {
	echo "SKIP lifecycle: no .deb for this machine's architecture ($hostarch)"
	exit 0
}
root=$tmp/root

if [ "$(id -u)" != 0 ] || ! command -v chroot >/dev/null 2>&1; then
	mkdir -p "$root"
	dpkg-deb -x "$deb" "$root"
	"$root/usr/bin/vigil" -c "$root/etc/vigil/config.toml" config check >"$tmp/out" 2>&1 ||
		fail "installed config check: $(cat "$tmp/out")"
	echo "SKIP lifecycle: needs root (chroot); layout and config check from dpkg-deb -x ok"
	exit 0
fi

# A merged-/usr root like Debian 12's, with just enough to run the scripts.
mkdir -p "$root/usr/bin" "$root/usr/sbin" "$root/usr/lib" "$root/etc" "$root/tmp" "$root/dev" \
	"$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/var/log" \
	"$root/run/systemd/system" "$root/run/udev"
ln -s usr/bin "$root/bin"
ln -s usr/sbin "$root/sbin"
ln -s usr/lib "$root/lib"
if [ -d /lib64 ]; then
	mkdir -p "$root/usr/lib64"
	ln -s usr/lib64 "$root/lib64"
fi
: >"$root/var/lib/dpkg/status"
mknod -m 666 "$root/dev/null" c 1 3 || fail "mknod $root/dev/null"
for b in sh cat rm; do
	src=$(readlink -f "$(command -v "$b")")
	cp "$src" "$root/usr/bin/$b"
	for lib in $(ldd "$src" 2>/dev/null | grep -o '/[^ ]*' || true); do
		mkdir -p "$root$(dirname "$lib")"
		[ -e "$root$lib" ] || cp "$(readlink -f "$lib")" "$root$lib"
	done
done
for b in systemctl systemd-sysusers udevadm modprobe; do
	printf '#!/bin/sh\necho "%s $*" >>/calls.log\n' "$b" >"$root/usr/bin/$b"
	chmod 0755 "$root/usr/bin/$b"
done

dpkg_root() {
	PATH=/usr/sbin:/usr/bin:/sbin:/bin dpkg --root="$root" --force-bad-path "$@" >"$tmp/dpkg.out" 2>&1 ||
		fail "dpkg $*: $(cat "$tmp/dpkg.out")"
}
calls() { cat "$root/calls.log" 2>/dev/null || true; }
called() { calls | grep -qx "$1" || fail "$step: the scripts did not run '$1'; they ran: $(calls)"; }
not_called() { ! calls | grep -Eq "$1" || fail "$step: the scripts ran '$(calls | grep -E "$1")'"; }

# Without ca-certificates dpkg refuses to configure vigil (HTTPS needs the
# CA bundle); status entries stand in for it and tzdata afterwards.
step="install without ca-certificates"
if PATH=/usr/sbin:/usr/bin:/sbin:/bin dpkg --root="$root" --force-bad-path -i "$deb" >"$tmp/dpkg.out" 2>&1; then
	fail "$step: dpkg configured vigil: $(cat "$tmp/dpkg.out")"
fi
grep -q 'vigil depends on ca-certificates' "$tmp/dpkg.out" || fail "$step: $(cat "$tmp/dpkg.out")"
PATH=/usr/sbin:/usr/bin:/sbin:/bin dpkg --root="$root" --force-bad-path -P vigil >/dev/null 2>&1 || true
rm -f "$root/calls.log"
printf 'Package: ca-certificates\nStatus: install ok installed\nPriority: optional\nMaintainer: stand-in\nArchitecture: all\nVersion: 20230311\nDescription: stand-in for the dependency\n\n' \
	>>"$root/var/lib/dpkg/status"
printf 'Package: tzdata\nStatus: install ok installed\nPriority: optional\nMaintainer: stand-in\nArchitecture: all\nVersion: 2024a-0+deb12u1\nDescription: stand-in for the dependency\n\n' \
	>>"$root/var/lib/dpkg/status"

step="install"
dpkg_root -i "$deb"
called "systemd-sysusers vigil.conf"
called "udevadm control --reload-rules"
called "modprobe -q i2c-dev"
called "systemctl daemon-reload"
not_called '^systemctl (enable|reenable|preset|start|restart|try-restart)( |$)'
[ -z "$(find "$root/etc/systemd" -name vigil.service 2>/dev/null)" ] || fail "install enabled the unit"
grep -q "systemctl enable --now vigil" "$tmp/dpkg.out" || fail "install did not say how to enable the unit"
PATH=/usr/sbin:/usr/bin:/sbin:/bin dpkg --root="$root" --status vigil >"$tmp/status"
grep -qx 'Status: install ok installed' "$tmp/status" || fail "not installed: $(cat "$tmp/status")"
grep -q '^ /etc/vigil/config.toml [0-9a-f]\{32\}$' "$tmp/status" || fail "config.toml is not a conffile"
grep -q '^ /etc/vigil/HEARTBEAT.md [0-9a-f]\{32\}$' "$tmp/status" || fail "HEARTBEAT.md is not a conffile"
for p in /usr/bin/vigil /lib/systemd/system/vigil.service /usr/lib/sysusers.d/vigil.conf \
	/lib/udev/rules.d/60-vigil.rules /usr/lib/modules-load.d/vigil.conf; do
	[ -f "$root$p" ] || fail "$p not installed"
done
# The installed binary accepts the installed config, as `vigil run` will.
chroot "$root" /usr/bin/vigil -c /etc/vigil/config.toml config check >"$tmp/out" 2>&1 ||
	fail "installed vigil config check: $(cat "$tmp/out")"

# An upgrade keeps local edits to conffiles and the state, and restarts the
# daemon only if it runs (try-restart); it enables nothing.
step="upgrade"
echo '# local edit' >>"$root/etc/vigil/config.toml"
mkdir -p "$root/var/lib/private/vigil"
echo state >"$root/var/lib/private/vigil/vigil.db"
ln -s private/vigil "$root/var/lib/vigil"
: >"$root/calls.log"
dpkg_root -i "$deb"
called "systemctl try-restart vigil.service"
not_called '^systemctl (enable|reenable|preset|start|restart|stop)( |$)'
grep -qx '# local edit' "$root/etc/vigil/config.toml" || fail "upgrade lost the local edit to config.toml"
[ "$(cat "$root/var/lib/vigil/vigil.db")" = state ] || fail "upgrade lost the state"

# Remove stops the daemon and keeps conffiles and state; purge deletes both.
step="remove"
: >"$root/calls.log"
dpkg_root -r vigil
called "systemctl stop vigil.service"
called "systemctl daemon-reload"
[ ! -e "$root/usr/bin/vigil" ] || fail "remove left /usr/bin/vigil"
grep -qx '# local edit' "$root/etc/vigil/config.toml" || fail "remove deleted config.toml"
[ -f "$root/var/lib/vigil/vigil.db" ] || fail "remove deleted the state"

step="purge"
dpkg_root -P vigil
[ ! -e "$root/etc/vigil/config.toml" ] || fail "purge left /etc/vigil/config.toml"
[ ! -e "$root/var/lib/private/vigil" ] && [ ! -e "$root/var/lib/vigil" ] && [ ! -L "$root/var/lib/vigil" ] ||
	fail "purge left the state in /var/lib"

echo "lifecycle  ok  $deb: install (enables nothing), config check, upgrade (keeps edits and state, try-restart), remove (stop), purge"
