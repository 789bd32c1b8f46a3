#!/bin/sh
# The SD card image: Buildroot's Raspberry Pi boot partition and root file
# system, and a third partition for /var/lib/edged (ext4, 64 MiB, empty:
# S90edged mounts it; a new root file system leaves it as it is).
set -e
BOARD_DIR="$(dirname "$0")"
"$HOST_DIR/sbin/mkfs.ext4" -q -F -L edged-data "$BINARIES_DIR/data.ext4" 64M
files=$(find "$BINARIES_DIR/rpi-firmware" -mindepth 1 -maxdepth 1 -printf '\t\t\t"rpi-firmware/%f",\n')
files="$files
			\"bcm2711-rpi-4-b.dtb\",
			\"Image\""
awk -v f="$files" '{ sub(/#BOOT_FILES#/, f) } 1' "$BOARD_DIR/genimage-rpi4.cfg.in" > "$BINARIES_DIR/genimage.cfg"
GENIMAGE_TMP="${BUILD_DIR}/genimage.tmp"
rm -rf "$GENIMAGE_TMP"
genimage --rootpath "$TARGET_DIR" --tmppath "$GENIMAGE_TMP" --inputpath "$BINARIES_DIR" \
	--outputpath "$BINARIES_DIR" --config "$BINARIES_DIR/genimage.cfg"
