#!/usr/bin/env bash
# Stripe every local NVMe instance-store disk into one RAID0 array and mount it
# as the model cache. Runs at every boot (a systemd oneshot): instance store is
# wiped by a stop/start (spot interruptions, the idle watchdog), kept by a reboot.
#
# usage: nvme-cache.sh MOUNT_POINT EXPECTED_DISKS
set -euo pipefail

mount_point="$1"
expected="$2"
array=/dev/md/model-cache
label=model-cache

log() { echo "nvme-cache: $*" >&2; }

mkdir -p "$mount_point"
if mountpoint -q "$mount_point"; then
  log "$mount_point already mounted"
  exit 0
fi

mapfile -t disks < <(lsblk -dpno NAME,MODEL | awk '/Amazon EC2 NVMe Instance Storage/ {print $1}')
if [ "${#disks[@]}" -eq 0 ]; then
  log "no instance-store disks; the cache stays on the root volume"
  exit 0
fi
if [ "${#disks[@]}" -ne "$expected" ]; then
  log "found ${#disks[@]} instance-store disks, the catalog says $expected; using what is there"
fi

# The AMI or cloud-init may have mounted a disk (ephemeral0, /opt/dlami/nvme): release them.
for disk in "${disks[@]}"; do
  while read -r target; do
    [ -n "$target" ] && umount "$target"
  done < <(findmnt -rno TARGET -S "$disk" || true)
  for holder in /sys/block/"$(basename "$disk")"/holders/*; do
    [ -e "$holder" ] || continue
    md="/dev/$(basename "$holder")"
    if [ "$(readlink -f "$md")" != "$(readlink -f "$array" 2>/dev/null || true)" ]; then
      while read -r target; do
        [ -n "$target" ] && umount "$target"
      done < <(findmnt -rno TARGET -S "$md" || true)
      mdadm --stop "$md"
    fi
  done
done

if [ "${#disks[@]}" -eq 1 ]; then
  device="${disks[0]}"
elif [ -e "$array" ] || mdadm --assemble "$array" "${disks[@]}" 2>/dev/null; then
  device="$array"  # a reboot kept the array and its cached weights
else
  mdadm --create "$array" --run --level=0 --chunk=256 --raid-devices="${#disks[@]}" "${disks[@]}"
  device="$array"
fi

if [ "$(blkid -s LABEL -o value "$device" 2>/dev/null || true)" != "$label" ]; then
  mkfs.xfs -f -L "$label" "$device"
fi
mount -o noatime "$device" "$mount_point"
log "mounted $device (${#disks[@]} disks) at $mount_point"
