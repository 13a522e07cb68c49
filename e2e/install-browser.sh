#!/usr/bin/env bash
# Prepares the browser tests so that nothing is downloaded while they run:
#   - Chromium from Debian at /usr/bin/chromium (apt-get when missing, as root),
#   - the Playwright driver that playwright-go v0.5700.0 looks for in
#     PLAYWRIGHT_DRIVER_PATH: DRIVER_DIR/package is the npm package
#     playwright-core at exactly its playwrightCliVersion (1.57.0), and
#     DRIVER_DIR/node is a link to this machine's node (18 or later).
# playwright.Run then finds `DRIVER_DIR/node DRIVER_DIR/package/cli.js --version`
# printing "Version 1.57.0" and downloads nothing.
#
# Usage:   e2e/install-browser.sh DRIVER_DIR
#          eval "$(e2e/install-browser.sh DRIVER_DIR)"   # exports the variable
# Idempotent: a second run checks and returns in well under a second.
# Messages go to stderr; stdout carries only the `export ...` line(s).
set -euo pipefail

PW_VERSION=1.57.0 # must equal playwrightCliVersion in playwright-go's run.go
AXE_VERSION=4.10.3 # axe-core, injected by the tests for the accessibility check
CHROMIUM=/usr/bin/chromium
NODE_MIN_MAJOR=18 # playwright-core's engines.node

say() { echo "install-browser: $*" >&2; }
die() { say "error: $*"; exit 1; }

if [ $# -ne 1 ] || [ -z "$1" ]; then die "usage: $0 DRIVER_DIR"; fi
dir=$(realpath -m -- "$1")
case "$dir" in /) die "refusing to use / as DRIVER_DIR" ;; esac

# --- system packages (Debian) ---------------------------------------------
. "$(dirname "$0")/apt-install.sh"

[ -x "$CHROMIUM" ] || apt_install chromium
[ -x "$CHROMIUM" ] || die "$CHROMIUM still missing after installing chromium"

if ! command -v node >/dev/null; then
	apt_install nodejs
	command -v npm >/dev/null || apt_install npm
fi
node_bin=$(command -v node)
"$node_bin" -e "process.exit(+process.versions.node.split('.')[0] >= $NODE_MIN_MAJOR ? 0 : 1)" ||
	die "node $("$node_bin" --version) at $node_bin is too old: playwright-core $PW_VERSION needs node >= $NODE_MIN_MAJOR"

# --- Playwright driver ----------------------------------------------------
# One run at a time per DRIVER_DIR (the lock lives outside the work tree).
if command -v flock >/dev/null; then
	lock="${TMPDIR:-/tmp}/install-browser-$(printf %s "$dir" | cksum | cut -d' ' -f1).lock"
	exec 9>"$lock"
	flock 9
fi

# Exactly the check playwright-go makes before it would download anything.
driver_ok() {
	[ -f "$dir/package/cli.js" ] && [ -x "$dir/node" ] &&
		[ "$("$dir/node" "$dir/package/cli.js" --version 2>/dev/null)" = "Version $PW_VERSION" ]
}
# A driver dir whose package is right but whose node link is stale or
# dangling (node moved) only needs the link redone.
if [ -f "$dir/package/cli.js" ] && [ "$(readlink "$dir/node" 2>/dev/null || true)" != "$node_bin" ] &&
	{ [ -L "$dir/node" ] || [ ! -e "$dir/node" ]; }; then
	ln -sfn "$node_bin" "$dir/node"
fi

if driver_ok; then
	say "Playwright driver $PW_VERSION already in $dir"
else
	# Never wipe a directory that is not a driver directory.
	if [ -e "$dir" ] && [ -n "$(ls -A "$dir" 2>/dev/null)" ] && [ ! -e "$dir/package" ] && [ ! -L "$dir/node" ]; then
		die "$dir exists, is not empty and is not a Playwright driver directory"
	fi
	command -v npm >/dev/null || apt_install npm
	rm -rf "$dir".new.* # left by a run that was killed
	say "fetching playwright-core@$PW_VERSION from npm into $dir"
	mkdir -p "$(dirname "$dir")"
	new=$(mktemp -d "$dir.new.XXXXXX")
	trap 'rm -rf "$new"' EXIT
	chmod 755 "$new" # mktemp makes it 700; other users run the tests too
	(cd "$new" && npm pack --silent --loglevel=error --prefer-offline "playwright-core@$PW_VERSION" >/dev/null)
	tar -xzf "$new/playwright-core-$PW_VERSION.tgz" -C "$new"
	rm -f "$new/playwright-core-$PW_VERSION.tgz"
	ln -s "$node_bin" "$new/node"
	[ "$("$new/node" "$new/package/cli.js" --version)" = "Version $PW_VERSION" ] ||
		die "the fetched driver does not report version $PW_VERSION"
	# Swap in the finished directory so an interrupted run leaves no half driver.
	rm -rf "$dir"
	mv "$new" "$dir"
	trap - EXIT
	driver_ok || die "driver in $dir does not work"
	say "Playwright driver $PW_VERSION ready in $dir"
fi

# --- axe-core (accessibility rules the tests inject into pages) -----------
axe_ok() {
	[ -f "$dir/axe-core/axe.min.js" ] && [ "$(cat "$dir/axe-core/VERSION" 2>/dev/null)" = "$AXE_VERSION" ]
}
if ! axe_ok; then
	command -v npm >/dev/null || apt_install npm
	say "fetching axe-core@$AXE_VERSION from npm into $dir/axe-core"
	rm -rf "$dir"/axe.new.* # left by a run that was killed
	new=$(mktemp -d "$dir/axe.new.XXXXXX")
	trap 'rm -rf "$new"' EXIT
	(cd "$new" && npm pack --silent --loglevel=error --prefer-offline "axe-core@$AXE_VERSION" >/dev/null)
	tar -xzf "$new/axe-core-$AXE_VERSION.tgz" -C "$new"
	mkdir -p "$new/axe-core"
	cp "$new/package/axe.min.js" "$new/axe-core/axe.min.js"
	echo "$AXE_VERSION" >"$new/axe-core/VERSION"
	rm -rf "$dir/axe-core"
	mv "$new/axe-core" "$dir/axe-core"
	rm -rf "$new"
	trap - EXIT
	axe_ok || die "axe-core in $dir/axe-core is not usable"
fi

say "chromium: $("$CHROMIUM" --version 2>/dev/null || echo '?') at $CHROMIUM"
echo "export PLAYWRIGHT_DRIVER_PATH=$(printf %q "$dir")"
