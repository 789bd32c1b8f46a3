#!/bin/sh
# After Buildroot's board/qemu/post-image.sh: an empty data disk image
# for /var/lib/edged (S90edged formats a blank one at the first boot;
# this one is ready-made), next to rootfs.ext2.
set -e
img="$BINARIES_DIR/data.ext4"
[ -e "$img" ] && exit 0
"$HOST_DIR/sbin/mkfs.ext4" -q -L edged-data "$img" 64M
