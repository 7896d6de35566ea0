#!/bin/sh
# Boot the arm64 .deb on a Debian bookworm board under real systemd
# (make test-board, see mk/dist.mk).
#
# A Debian root with systemd, mosquitto and the arm64 kernel is built with
# mmdebstrap (cached in $BOARD_DIR, keyed by what goes into it) and booted
# with qemu-system-aarch64 -M virt, console on the serial port. A unit in
# the image runs the checks below at boot from a second disk that carries
# the .deb and the check script, prints "BOARD: ok|FAIL ..." lines on the
# console, and powers off. Two boots:
#
#   1. install the .deb (apt, offline); start to READY (Type=notify); a rule
#      on board.clock_synced fires, so the sandboxed service read it through
#      adjtimex(2) (control, first: with the unit's old filter it does not); the
#      rule alert is in `journalctl -u vigil -p warning`; `vigil status`;
#      `vigil set heartbeat.interval 10m` and `vigil checklist set -` work
#      under the unit's hardening (/etc/vigil read-only); stop publishes a retained `offline` to the local mosquitto; start
#      again, and power off with vigil running.
#   2. after that shutdown the broker's retained status is `offline` (vigil
#      stopped before mosquitto); the run-time interval is still in force;
#      purge leaves nothing behind.
#
# Nothing is cached in git: the rootfs, kernel and images live in
# $BOARD_DIR (default /var/tmp/vigil-board). Needs root (mmdebstrap, binfmt
# for the arm64 maintainer scripts; re-run through sudo otherwise), apt to
# install what is missing, and about 2 GB of disk. On a 2-core machine: the
# first run (building the root) about 8-9 minutes, later runs under 3.
#
# `sh packaging/test-board.sh tools` only installs the tools (the step
# below), so that step can be run and tested on its own.
set -eu

# install_tools: the host's tools, installed with apt's own progress when
# missing (scripts/apt-install.sh: a failed apt-get update is a warning).
install_tools() {
	missing=""
	command -v mmdebstrap >/dev/null 2>&1 || missing="$missing mmdebstrap"
	# mmdebstrap only recommends arch-test, and --no-install-recommends
	# leaves it out; without it a foreign-architecture root fails with
	# "install arch-test for foreign architecture support".
	command -v arch-test >/dev/null 2>&1 || missing="$missing arch-test"
	command -v qemu-system-aarch64 >/dev/null 2>&1 || missing="$missing qemu-system-arm"
	command -v qemu-img >/dev/null 2>&1 || missing="$missing qemu-utils"
	[ -x /usr/libexec/qemu-binfmt/aarch64-binfmt-P ] || missing="$missing qemu-user-static"
	command -v mkfs.ext4 >/dev/null 2>&1 || missing="$missing e2fsprogs"
	[ -z "$missing" ] || sh "$(dirname "$0")/../scripts/apt-install.sh" --no-install-recommends $missing
}
if [ "${1:-}" = tools ]; then
	install_tools
	exit
fi

: "${DIST_DIR:=dist}" "${BOARD_DIR:=/var/tmp/vigil-board}" "${BOARD_TIMEOUT:=900}"
: "${DEB_VERSION:?}"
MIRROR=${BOARD_MIRROR:-http://deb.debian.org/debian}

fail() {
	echo "FAIL: test-board: $*" >&2
	exit 1
}
say() { echo "== test-board: $*"; }
start=$(date +%s)
elapsed() { echo "$(($(date +%s) - start))s"; }

deb=$DIST_DIR/vigil_${DEB_VERSION}-1_arm64.deb
[ -f "$deb" ] || fail "$deb missing: run make deb"
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null 2>&1 || fail "needs root (mmdebstrap --mode=root, binfmt_misc)"
	exec sudo DIST_DIR="$DIST_DIR" BOARD_DIR="$BOARD_DIR" BOARD_TIMEOUT="$BOARD_TIMEOUT" DEB_VERSION="$DEB_VERSION" \
		${BOARD_MIRROR:+BOARD_MIRROR="$BOARD_MIRROR"} sh "$0"
fi

install_tools || fail "the tools are missing (see above)"

# mmdebstrap runs the arm64 maintainer scripts through qemu-user: register
# the interpreter with binfmt_misc when it is not (a container often has
# binfmt_misc unmounted).
if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
	[ -e /proc/sys/fs/binfmt_misc/register ] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc ||
		fail "cannot mount binfmt_misc"
	say "registering qemu-aarch64 with binfmt_misc"
	cat /usr/lib/binfmt.d/qemu-aarch64.conf >/proc/sys/fs/binfmt_misc/register ||
		fail "cannot register qemu-aarch64 with binfmt_misc"
fi

# The runner: at boot, mount the payload disk and run its check script with
# output on the serial console.
runner='[Unit]
Description=vigil board test (payload disk LABEL=vigil-board)
After=multi-user.target mosquitto.service

[Service]
Type=oneshot
ExecStart=/bin/sh -c "mkdir -p /board && mount -o ro /dev/disk/by-label/vigil-board /board && exec /bin/sh /board/run.sh"
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyAMA0
TimeoutStartSec=infinity

[Install]
WantedBy=multi-user.target'
packages=systemd,systemd-sysv,udev,dbus,mosquitto,mosquitto-clients,linux-image-arm64,initramfs-tools,ca-certificates,tzdata,kmod
# The initramfs needs only what mounts a virtio-mmio disk (the -device
# virtio-blk-device below) with ext4: with the
# default MODULES=most, mkinitramfs under qemu-user takes half an hour.
initramfs_modules='virtio_mmio virtio_blk ext4'

key=$(printf '%s\n%s\n%s\n%s\n' "$packages" "$runner" "$MIRROR" "$initramfs_modules" | sha256sum | cut -c1-12)
base=$BOARD_DIR/base-$key
mkdir -p "$BOARD_DIR"
if [ ! -f "$base/done" ]; then
	say "building the Debian bookworm arm64 root in $base (mmdebstrap; once, then cached)"
	mkdir -p "$base"
	# A finished mmdebstrap tree is kept until the image is made from it.
	if [ ! -d "$base/rootfs" ]; then
		rm -rf "$base/rootfs.tmp"
		mmdebstrap --mode=root --architectures=arm64 --variant=apt --include="$packages" \
			--setup-hook='mkdir -p "$1/etc/initramfs-tools/conf.d" "$1/usr/share/initramfs-tools/modules.d"' \
			--setup-hook='echo MODULES=list >"$1/etc/initramfs-tools/conf.d/vigil-board.conf"' \
			--setup-hook="printf '%s\\n' $initramfs_modules >\"\$1/usr/share/initramfs-tools/modules.d/vigil-board\"" \
			bookworm "$base/rootfs.tmp" "$MIRROR"
		mv "$base/rootfs.tmp" "$base/rootfs"
	fi
	r=$base/rootfs
	printf '%s\n' "$runner" >"$r/etc/systemd/system/vigil-board.service"
	mkdir -p "$r/etc/systemd/system/multi-user.target.wants"
	ln -sf /etc/systemd/system/vigil-board.service "$r/etc/systemd/system/multi-user.target.wants/vigil-board.service"
	ln -sf /dev/null "$r/etc/systemd/system/serial-getty@ttyAMA0.service"
	echo board >"$r/etc/hostname"
	printf 'LABEL=vigil-root / ext4 rw 0 1\n' >"$r/etc/fstab"
	cp "$(ls "$r"/boot/vmlinuz-* | tail -1)" "$base/vmlinuz"
	cp "$(ls "$r"/boot/initrd.img-* | tail -1)" "$base/initrd.img"
	rm -rf "$r"/var/cache/apt/archives/*.deb "$r"/var/lib/apt/lists/*_Packages
	say "making the root image ($(du -sh "$r" | cut -f1))"
	mkfs.ext4 -q -F -L vigil-root -d "$r" "$base/rootfs.img" 2G
	rm -rf "$r"
	touch "$base/done"
	say "root image ready after $(elapsed)"
fi

run=$BOARD_DIR/run
rm -rf "$run"
mkdir -p "$run/payload"
cp "$deb" "$run/payload/vigil.deb"

# The checks, run inside the board by vigil-board.service. PHASE lives on
# the board's root, so the second boot knows it is the second.
cat >"$run/payload/run.sh" <<'EOF'
#!/bin/sh
set -u
PATH=/usr/sbin:/usr/bin:/sbin:/bin
ok() { echo "BOARD: ok   $*"; }
bad() { echo "BOARD: FAIL $*"; }
info() { echo "BOARD: ..   $*"; }
# wait_for SECONDS CMD...: until CMD succeeds.
wait_for() {
	n=$1; shift
	while [ "$n" -gt 0 ]; do "$@" && return 0; sleep 1; n=$((n - 1)); done
	return 1
}
rule_fired() { journalctl -u vigil -o cat --no-pager | grep -q 'rule=clock_read state=firing'; }
status_is() { [ "$(mosquitto_sub -h 127.0.0.1 -C 1 -W 5 -t vigil/board/status 2>/dev/null)" = "$1" ]; }

phase=$(cat /var/lib/vigil-board-phase 2>/dev/null || echo 1)
info "phase $phase, kernel $(uname -r), $(systemctl --version | head -1)"

if [ "$phase" = 1 ]; then
	echo 2 >/var/lib/vigil-board-phase; sync

	if apt-get install -y /board/vigil.deb >/tmp/apt.log 2>&1 && dpkg -s vigil | grep -qx 'Status: install ok installed'; then
		ok "install: apt-get install ./vigil.deb, offline ($(dpkg -s vigil | grep ^Version:), $(dpkg -s vigil | grep ^Depends:))"
	else
		bad "install:"; sed 's/^/BOARD:        /' /tmp/apt.log
	fi
	[ "$(systemctl is-enabled vigil 2>&1)" = disabled ] && ok "install enabled nothing (systemctl is-enabled: disabled)" ||
		bad "install: is-enabled says $(systemctl is-enabled vigil 2>&1)"
	[ -f /usr/share/man/man1/vigil.1.gz ] && [ -f /usr/share/doc/vigil/README.md ] && ok "man page and docs installed" || bad "no man page or docs"

	# The board as shipped, plus MQTT to the local broker and a rule that
	# fires only if the service could read board.clock_synced.
	cat >>/etc/vigil/config.toml <<'TOML'

[mqtt]
broker = "tcp://127.0.0.1:1883"
topic_prefix = "vigil"

[[rule]]
name = "clock_read"
when = "board.clock_synced >= 0"
severity = "warning"
message = "board.clock_synced read by the service: {board.clock_synced}"
TOML
	sed -i 's/^# id = .*/id = "board"/; s/^sample_interval = .*/sample_interval = "2s"/' /etc/vigil/config.toml
	vigil config check >/tmp/check.log 2>&1 && ok "vigil config check" || { bad "vigil config check:"; sed 's/^/BOARD:        /' /tmp/check.log; }

	# Control first, on a fresh state: the filter as it was (adjtimex
	# allowed, then taken back with @clock by ~@privileged) gives the
	# service no board.clock_synced, so the rule cannot fire.
	mkdir -p /run/systemd/system/vigil.service.d
	printf '[Service]\nSystemCallFilter=\nSystemCallFilter=@system-service adjtimex\nSystemCallFilter=~@privileged @resources\n' \
		>/run/systemd/system/vigil.service.d/old-filter.conf
	systemctl daemon-reload
	systemctl start vigil
	sleep 10
	snap=$(mosquitto_sub -h 127.0.0.1 -C 1 -W 10 -t vigil/board/sensors 2>/dev/null)
	if rule_fired || echo "$snap" | grep -q clock_synced || [ -z "$snap" ]; then
		bad "control: with the old filter: rule fired or clock_synced published (or no snapshot: '$snap')"
	else
		ok "control: with the old filter (adjtimex denied) the service has no board.clock_synced and the rule stays silent"
	fi
	systemctl stop vigil
	rm -r /run/systemd/system/vigil.service.d
	rm -f /var/lib/private/vigil/vigil.db
	mosquitto_pub -h 127.0.0.1 -r -n -t vigil/board/sensors
	systemctl daemon-reload

	t0=$(date +%s)
	if systemctl start vigil && [ "$(systemctl show -P ActiveState vigil)" = active ]; then
		ok "start to READY in $(($(date +%s) - t0))s (Type=notify: $(systemctl show -P ActiveState vigil)/$(systemctl show -P SubState vigil), Status: $(systemctl show -P StatusText vigil))"
	else
		bad "start: $(systemctl show -P ActiveState vigil) $(systemctl show -P Result vigil)"
		journalctl -u vigil --no-pager -o cat | tail -20 | sed 's/^/BOARD:        /'
	fi
	info "unit: User=$(systemctl show -P User vigil) DynamicUser=$(systemctl show -P DynamicUser vigil) RuntimeDirectory=$(systemctl show -P RuntimeDirectory vigil) MemoryHigh=$(systemctl show -P MemoryHigh vigil) MemoryMax=$(systemctl show -P MemoryMax vigil) After has mosquitto: $(systemctl show -P After vigil | grep -o mosquitto.service)"
	info "filter: adjtimex in SystemCallFilter: $(systemctl show -P SystemCallFilter vigil | tr ' ' '\n' | grep -cx adjtimex), clock_settime: $(systemctl show -P SystemCallFilter vigil | tr ' ' '\n' | grep -cx clock_settime)"

	if wait_for 30 rule_fired; then
		ok "board.clock_synced read by the service: $(journalctl -u vigil -o cat --no-pager | grep -m1 'rule=clock_read state=firing' | grep -o 'summary=.*')"
	else
		bad "the rule on board.clock_synced never fired: the service did not read it"
		journalctl -u vigil --no-pager -o cat | tail -20 | sed 's/^/BOARD:        /'
	fi
	snap=$(mosquitto_sub -h 127.0.0.1 -C 1 -W 10 -t vigil/board/sensors 2>/dev/null)
	echo "$snap" | grep -q clock_synced && ok "MQTT sensors snapshot carries clock_synced: $(echo "$snap" | grep -o '"[^"]*clock_synced[^,}]*')" ||
		bad "no clock_synced in the sensors snapshot: $snap"

	warn=$(journalctl -u vigil -p warning -o cat --no-pager)
	if echo "$warn" | grep -q 'rule=clock_read state=firing'; then
		ok "journalctl -u vigil -p warning lists the rule alert: $(echo "$warn" | grep -m1 'rule=clock_read')"
	else
		bad "journalctl -u vigil -p warning lacks the rule alert; it shows:"; echo "$warn" | sed 's/^/BOARD:        /'
	fi
	info "journal priorities of vigil's lines: $(journalctl -u vigil -o json --no-pager | grep -o '"PRIORITY":"[0-9]"' | sort | uniq -c | tr -s ' \n' ' ')"
	vigil status >/tmp/status.txt 2>&1 && ok "vigil status: $(grep '^clock:' /tmp/status.txt)" || { bad "vigil status:"; sed 's/^/BOARD:        /' /tmp/status.txt; }

	status_is online && ok "retained status online while running" || bad "status while running: $(mosquitto_sub -h 127.0.0.1 -C 1 -W 5 -t vigil/board/status)"

	# Run-time settings under the hardened unit: /etc/vigil stays read-only,
	# the overlay and the checklist from afar live in the state directory.
	if vigil set heartbeat.interval 10m >/tmp/set.txt 2>&1 && vigil get heartbeat.interval >/tmp/get.txt 2>&1 && grep -q '10m .*by socket' /tmp/get.txt; then
		ok "vigil set heartbeat.interval 10m, applied by the running service: $(tail -1 /tmp/get.txt | tr -s ' ')"
	else
		bad "vigil set/get heartbeat.interval:"; cat /tmp/set.txt /tmp/get.txt | sed 's/^/BOARD:        /'
	fi
	if printf -- '- Is the board cool enough?\n' | vigil checklist set - >/tmp/cl.txt 2>&1 && vigil checklist show 2>&1 | grep -q 'set from afar'; then
		ok "vigil checklist set - under ProtectSystem=strict: $(vigil checklist show 2>&1 | head -1)"
	else
		bad "vigil checklist set -:"; sed 's/^/BOARD:        /' /tmp/cl.txt
	fi
	since=$(date '+%Y-%m-%d %H:%M:%S')
	systemctl stop vigil
	st=$(mosquitto_sub -h 127.0.0.1 -C 1 -W 5 -t 'vigil/+/status' -v 2>&1)
	[ "$st" = "vigil/board/status offline" ] && ok "stop: mosquitto_sub -C 1 -t vigil/+/status -> $st" || bad "stop: retained status is '$st'"
	journalctl -u vigil --since "$since" -o cat --no-pager | grep -q 'vigil stopped' && ok "stop logged 'vigil stopped'" || bad "no 'vigil stopped' in the journal"

	systemctl start vigil
	wait_for 15 status_is online && ok "started again, status online; powering off with vigil running" || bad "restart: status not online"
	echo "BOARD: phase 1 done"
	sync
	systemctl --no-block poweroff
	exit 0
fi

if [ "$phase" = 2 ]; then
	echo 3 >/var/lib/vigil-board-phase; sync
	st=$(mosquitto_sub -h 127.0.0.1 -C 1 -W 5 -t 'vigil/+/status' -v 2>&1)
	if [ "$st" = "vigil/board/status offline" ]; then
		ok "after the shutdown the broker's retained status is offline (vigil stopped before mosquitto)"
	else
		bad "after the shutdown the retained status is '$st'"
	fi
	info "last boot's shutdown order: $(journalctl -b -1 -o cat --no-pager | grep -E '^Stopp(ing|ed) (vigil|mosquitto|Mosquitto)' | tr '\n' ';')"
	# The run-time setting survived the power-off with the service running.
	if vigil get heartbeat.interval 2>&1 | grep -q '10m .*by socket'; then
		ok "after the power-off the run-time interval is still in force: $(vigil get heartbeat.interval 2>&1 | tail -1 | tr -s ' ')"
	else
		bad "after the power-off: $(vigil get heartbeat.interval 2>&1 | tail -1)"
	fi
	if apt-get purge -y vigil >/tmp/purge.log 2>&1; then
		left=""
		for p in /usr/bin/vigil /etc/vigil /var/lib/vigil /var/lib/private/vigil /lib/systemd/system/vigil.service /usr/share/doc/vigil; do
			[ -e "$p" ] && left="$left $p"
		done
		[ -z "$left" ] && ok "purge: nothing left behind ($(dpkg -s vigil 2>&1 | head -1))" || bad "purge left:$left"
	else
		bad "purge:"; sed 's/^/BOARD:        /' /tmp/purge.log
	fi
	echo "BOARD: phase 2 done"
	sync
	systemctl --no-block poweroff
	exit 0
fi
echo "BOARD: phase $phase: nothing to do"
systemctl --no-block poweroff
EOF
mkfs.ext4 -q -F -L vigil-board -d "$run/payload" "$run/payload.img" 64M
qemu-img create -q -f qcow2 -F raw -b "$base/rootfs.img" "$run/root.qcow2"

boot() {
	say "booting the board ($1; qemu-system-aarch64 -M virt, cortex-a53, TCG)"
	timeout "$BOARD_TIMEOUT" qemu-system-aarch64 -M virt -cpu cortex-a53 -smp 2 -m 1024 \
		-nographic -no-reboot -nic none \
		-kernel "$base/vmlinuz" -initrd "$base/initrd.img" \
		-append "root=LABEL=vigil-root rw console=ttyAMA0 panic=-1 quiet" \
		-drive if=none,id=root,format=qcow2,file="$run/root.qcow2" -device virtio-blk-device,drive=root \
		-drive if=none,id=payload,format=raw,file="$run/payload.img",readonly=on -device virtio-blk-device,drive=payload \
		</dev/null 2>&1 | tr -d '\r' | tee -a "$run/console.log" | grep --line-buffered '^BOARD:' || true
	grep -q "^BOARD: $1 done" "$run/console.log" ||
		fail "$1 did not finish within ${BOARD_TIMEOUT}s; serial console in $run/console.log: $(tail -20 "$run/console.log")"
}
boot "phase 1"
boot "phase 2"

if grep -q '^BOARD: FAIL' "$run/console.log"; then
	fail "$(grep -c '^BOARD: FAIL' "$run/console.log") check(s) failed on the board (serial console: $run/console.log)"
fi
say "ok after $(elapsed): $(grep -c '^BOARD: ok' "$run/console.log") checks passed on a booted Debian bookworm arm64 board"
