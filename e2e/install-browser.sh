#!/usr/bin/env bash
# Prepares browser tests without downloading anything at test time:
#   - Debian's chromium (installed with apt when missing and we are root),
#   - the Playwright driver playwright-go expects: DRIVER_DIR/package is the
#     npm package playwright-core at exactly the version playwright-go pins,
#     and DRIVER_DIR/node is this machine's node.
# Usage: e2e/install-browser.sh DRIVER_DIR      (idempotent; fast when done)
set -euo pipefail
dir=${1:?usage: $0 DRIVER_DIR}
version=1.57.0 # playwright-go v0.5700.0's playwrightCliVersion

need_root() {
	echo "e2e: $1 is missing. Install it with: sudo apt-get update && sudo apt-get install -y --no-install-recommends $2" >&2
	exit 1
}
apt_install() {
	[ "$(id -u)" = 0 ] && command -v apt-get >/dev/null || need_root "$1" "$2"
	echo "e2e: installing $2 from Debian" >&2
	if [ -z "${APT_UPDATED:-}" ]; then apt-get update -qq; APT_UPDATED=1; fi
	# Without recommends: a plain install has been seen to fail midway here.
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$2" >/dev/null
}

[ -x /usr/bin/chromium ] || apt_install chromium chromium
command -v node >/dev/null || apt_install node nodejs
command -v npm >/dev/null || apt_install npm npm

if [ -x "$dir/node" ] && [ -f "$dir/package/cli.js" ] && grep -q "\"version\": \"$version\"" "$dir/package/package.json" 2>/dev/null; then
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "playwright-core@$version" >/dev/null)
rm -rf "$dir"
mkdir -p "$dir"
tar -xzf "$tmp/playwright-core-$version.tgz" -C "$dir"
ln -sf "$(command -v node)" "$dir/node"
echo "e2e: Playwright driver $version ready in $dir" >&2
