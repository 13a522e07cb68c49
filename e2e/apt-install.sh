# Sourced by the e2e scripts: apt_install PACKAGE... installs Debian
# packages the machine lacks, as root (otherwise it prints the command to
# run and exits 1). The caller defines say and die.
#
# No recommends: keeps installs small (chromium-sandbox is not needed
# headless with --no-sandbox) and avoids failures midway seen with a full
# install. apt-get update runs only when there are no package lists, or
# when the install fails with the lists there are (stale lists give 404s).
# Another apt run holding the lock is waited for.
apt_updated=
apt_install() { # PACKAGE...
	if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
		say "missing: $*. Install as root with:"
		say "  apt-get update && apt-get install -y --no-install-recommends $*"
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	local wait=(-o DPkg::Lock::Timeout=600)
	if ! compgen -G '/var/lib/apt/lists/*_Packages*' >/dev/null; then
		say "apt-get update"
		apt-get "${wait[@]}" update -qq >&2
		apt_updated=1
	fi
	say "apt-get install $*"
	if ! apt-get "${wait[@]}" install -y -qq --no-install-recommends "$@" >&2; then
		[ -z "$apt_updated" ] || die "apt-get install $* failed"
		say "install failed with the current package lists: apt-get update and retry"
		apt-get "${wait[@]}" update -qq >&2
		apt_updated=1
		apt-get "${wait[@]}" install -y -qq --no-install-recommends "$@" >&2
	fi
}
