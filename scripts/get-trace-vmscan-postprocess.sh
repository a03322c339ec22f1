#!/usr/bin/env sh
# Downloads mmtests' trace-vmscan-postprocess.pl (GPL-2.0, by Mel Gorman; not
# shipped with reclaimsim) from the last mmtests commit that has it, so that
# `reclaimsim run --events FILE --events-format v3.2` output can be fed to it
# and the test r23_mmtests_postprocess_reads_the_events can run:
#   scripts/get-trace-vmscan-postprocess.sh /tmp/trace-vmscan-postprocess.pl
#   RECLAIMSIM_VMSCAN_POSTPROCESS=/tmp/trace-vmscan-postprocess.pl cargo test --release -p reclaimsim-cli --test events
set -eu
dest=${1:-trace-vmscan-postprocess.pl}
commit=38961f9b21a20daa20fbb4de6f84777a370df543
url=https://raw.githubusercontent.com/gormanm/mmtests/$commit/subreport/trace-vmscan-postprocess.pl
if command -v curl >/dev/null; then
  curl -fsSL -o "$dest.tmp" "$url"
else
  wget -q -O "$dest.tmp" "$url"
fi
mv "$dest.tmp" "$dest"
echo "wrote $dest (export RECLAIMSIM_VMSCAN_POSTPROCESS=$dest to run the test)"
