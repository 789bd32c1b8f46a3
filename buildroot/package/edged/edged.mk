################################################################################
#
# edged
#
################################################################################

# Built from the checkout this external tree is part of (its parent
# folder), stamped as `make arm64` stamps it.
EDGED_SITE = $(BR2_EXTERNAL_EDGED_PATH)/..
EDGED_SITE_METHOD = local
EDGED_VERSION = $(shell git -C $(BR2_EXTERNAL_EDGED_PATH)/.. describe --tags --always --dirty 2>/dev/null || echo dev)
EDGED_COMMIT = $(shell git -C $(BR2_EXTERNAL_EDGED_PATH)/.. rev-parse HEAD 2>/dev/null)
EDGED_DATE = $(shell git -C $(BR2_EXTERNAL_EDGED_PATH)/.. log -1 --format=%cI 2>/dev/null)
EDGED_LICENSE = Proprietary
EDGED_GOMOD = github.com/edged/edged
EDGED_BUILD_TARGETS = cmd/edged
EDGED_BIN_NAME = edged
# A static binary, as make arm64 and make armv7 build it: no cgo.
EDGED_GO_ENV = CGO_ENABLED=0
EDGED_LDFLAGS = -s -w \
	-X main.version=$(EDGED_VERSION) \
	-X main.buildNumber=$(EDGED_COMMIT) \
	-X main.buildDate=$(EDGED_DATE)

# Buildroot builds Go offline from a vendor folder, which a local site
# does not have: made after the copy, on the connected build host.
define EDGED_VENDOR
	cd $(@D) && $(HOST_GO_COMMON_ENV) GOFLAGS=-mod=mod GOPROXY=https://proxy.golang.org,direct \
		$(GO_BIN) mod vendor
endef
EDGED_POST_RSYNC_HOOKS += EDGED_VENDOR

# The init script, its settings, the default configuration and the mount
# point of the data partition come from the board's root file system
# overlay (board/edged/rootfs-overlay), the same files as the QEMU test
# image's (make image-arm64).

$(eval $(golang-package))
