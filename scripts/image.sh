#!/usr/bin/env bash
# Assembles the QEMU test image of edged for ARCH (arm64 or armv7) from
# Debian's packages: the kernel (linux-image-*-arm64 / -armmp) and
# busybox-static of that architecture, fetched with apt-get download
# (after dpkg --add-architecture), the gateway's root file system
# overlay (buildroot/board/edged/rootfs-overlay: init script, settings,
# default configuration, the same files as Buildroot's image) and
# bin/edged-linux-ARCH. Out: bin/image-ARCH/{vmlinuz,initrd.gz}.
#
# Usage: scripts/image.sh arm64|armv7
set -euo pipefail
cd "$(dirname "$0")/.."
arch=${1:?usage: scripts/image.sh arm64|armv7}
case $arch in
arm64) deb=arm64 kflavour=arm64 ;;
armv7) deb=armhf kflavour=armmp ;;
*) echo "image: unknown architecture $arch (arm64, armv7)" >&2; exit 2 ;;
esac
out=bin/image-$arch
cache=${IMAGE_CACHE:-$HOME/.cache/edged-image}/$deb
bin=bin/edged-linux-$arch
[[ -x $bin ]] || { echo "image: $bin is missing (make $arch)" >&2; exit 1; }
mkdir -p "$cache"

# The Debian packages, once: .debs in the cache are used whatever the
# indexes say; a mirror that is syncing is waited for (scripts/lib/apt.sh).
# shellcheck source=lib/apt.sh
source scripts/lib/apt.sh
if ! dpkg --print-foreign-architectures | grep -qx "$deb"; then
	dpkg --add-architecture "$deb"
	rm -f "$cache"/.updated
fi
if ! image_debs "$deb" "$kflavour" "$cache"; then
	echo "image: cannot download linux-image-$kflavour:$deb and busybox-static:$deb (apt's message above)" >&2
	exit 1
fi
kdeb=$(ls "$cache"/linux-image-*_"$deb".deb | tail -1)
bdeb=$(ls "$cache"/busybox-static_*_"$deb".deb | tail -1)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dpkg-deb -x "$kdeb" "$work/kernel"
dpkg-deb -x "$bdeb" "$work/busybox"
kver=$(ls "$work/kernel/lib/modules")

root=$work/root
mkdir -p "$root"/{bin,sbin,etc/init.d,proc,sys,dev,run,tmp,var/lib/edged,usr/bin,lib/modules/"$kver"}
cp "$work/busybox/bin/busybox" "$root/bin/busybox"
# The applets the scripts use, as links (busybox --install needs /proc).
for a in sh mount umount mkdir cat cut ip modprobe depmod insmod sleep dd hexdump grep tr echo chmod \
	mke2fs killall pidof kill rm touch sync logger reboot poweroff init ls sed; do
	ln -s busybox "$root/bin/$a"
done
ln -s ../bin/busybox "$root/sbin/init"
ln -s bin/busybox "$root/init"
# The modules rcS loads, with what they need.
mods=$work/kernel/lib/modules/$kver
for m in drivers/virtio/virtio_pci.ko drivers/virtio/virtio_pci_legacy_dev.ko drivers/virtio/virtio_pci_modern_dev.ko \
	drivers/net/virtio_net.ko drivers/net/net_failover.ko net/core/failover.ko drivers/block/virtio_blk.ko \
	fs/ext4/ext4.ko fs/jbd2/jbd2.ko fs/mbcache.ko lib/crc16.ko crypto/crc32c_generic.ko \
	drivers/watchdog/i6300esb.ko; do
	[[ -e $mods/kernel/$m ]] || continue
	mkdir -p "$root/lib/modules/$kver/kernel/$(dirname "$m")"
	cp "$mods/kernel/$m" "$root/lib/modules/$kver/kernel/$m"
done
cp "$mods"/modules.order "$mods"/modules.builtin "$root/lib/modules/$kver/" 2>/dev/null || true

# The gateway's overlay, as Buildroot installs it, and edged.
cp -a buildroot/board/edged/rootfs-overlay/. "$root/"
cp scripts/image/inittab "$root/etc/inittab"
install -m 0755 scripts/image/rcS "$root/etc/init.d/rcS"
install -m 0755 "$bin" "$root/usr/bin/edged"

mkdir -p "$out"
cp "$work/kernel/boot/vmlinuz-$kver" "$out/vmlinuz"
(cd "$root" && find . | cpio -o -H newc --owner 0:0 --quiet) | gzip -1 >"$out/initrd.gz"
echo "image: $out/vmlinuz and $out/initrd.gz (kernel $kver, $(du -h "$out/initrd.gz" | cut -f1) initramfs)"
