#!/usr/bin/env bash
# Vendors the API docs viewer: swagger-ui-dist (Apache-2.0) from npm, the
# pinned version only, into assets/ where it is embedded and served under
# content-hashed names like every other asset. Run it (make assets-swagger-ui)
# to change the version; the files it writes are committed.
set -euo pipefail

VERSION=${SWAGGER_UI_VERSION:-5.35.0}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

(cd "$work" && npm pack --silent "swagger-ui-dist@$VERSION" >/dev/null)
tar -xzf "$work"/swagger-ui-dist-"$VERSION".tgz -C "$work"
pkg=$work/package
got=$(node -p "require('$pkg/package.json').version")
if [ "$got" != "$VERSION" ]; then
	echo "fetch-swagger-ui: npm gave swagger-ui-dist $got, not $VERSION" >&2
	exit 1
fi
# The bundle carries a source-map comment whose map is not vendored.
sed '/^\/\/# sourceMappingURL=/d' "$pkg/swagger-ui-bundle.js" >"$here/swagger-ui-bundle.js"
sed '/sourceMappingURL=/d' "$pkg/swagger-ui.css" >"$here/swagger-ui.css"
{
	echo "swagger-ui-dist $VERSION (npm), https://github.com/swagger-api/swagger-ui"
	echo
	cat "$pkg/LICENSE"
	if [ -f "$pkg/NOTICE" ]; then
		echo
		cat "$pkg/NOTICE"
	fi
} >"$here/swagger-ui.LICENSE"
echo "swagger-ui-dist $VERSION: $(wc -c <"$here/swagger-ui-bundle.js") + $(wc -c <"$here/swagger-ui.css") bytes"
