#!/bin/sh
# make bench, powerd's part: the time of one sample (every source read),
# powerd's CPU time per hour while idle at the 1 s default and its RSS,
# on a fixture tree the size of a board with a few chips and on this
# host's own /sys and /proc. Writes the "powerd" section of
# docs/benchmarks.md.
# Usage: powerd.sh BUILD-DIR SRC-DIR OUTPUT.md [SECONDS]
set -eu
O=$1 src=$2 out=$3 secs=${4:-60}
bin=$O/bin
tmp=$(mktemp -d /tmp/nas-powerd-bench.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT

# A board with three chips (INA3221, a Super I/O, two drivetemp), RAPL
# and two bay disks: 16 sensors.
sys=$tmp/sys proc=$tmp/proc
mkdir -p "$proc" "$sys/class/net/lan1" "$sys/class/powercap/intel-rapl:0"
for h in 0 1 2 3; do mkdir -p "$sys/class/hwmon/hwmon$h"; done
echo ina3221 > "$sys/class/hwmon/hwmon0/name"
for c in 1 2 3; do
	echo 12000 > "$sys/class/hwmon/hwmon0/in${c}_input"
	echo 400 > "$sys/class/hwmon/hwmon0/curr${c}_input"
done
echo nct6775 > "$sys/class/hwmon/hwmon1/name"
for c in 1 2 3 4; do echo 40000 > "$sys/class/hwmon/hwmon1/temp${c}_input"; done
for c in 1 2; do
	echo 900 > "$sys/class/hwmon/hwmon1/fan${c}_input"
	echo 128 > "$sys/class/hwmon/hwmon1/pwm$c"
done
for h in 2 3; do
	echo drivetemp > "$sys/class/hwmon/hwmon$h/name"
	echo 35000 > "$sys/class/hwmon/hwmon$h/temp1_input"
done
echo 262143328850 > "$sys/class/powercap/intel-rapl:0/max_energy_range_uj"
echo 1000000 > "$sys/class/powercap/intel-rapl:0/energy_uj"
echo 1 > "$sys/class/net/lan1/carrier"
for b in 1 2; do
	d=$sys/devices/pci0000:00/host0/target0:0:$b/0:0:$b:0
	mkdir -p "$d" "$sys/block/sd$b"
	ln -s "../../devices/pci0000:00/host0/target0:0:$b/0:0:$b:0" "$sys/block/sd$b/device"
done
printf '   8 0 sd1 1 0 8 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n   8 16 sd2 1 0 8 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n' \
	> "$proc/diskstats"
head -3 /proc/stat > "$proc/stat"
sed -e 's|^sensor = model|sensor = hwmon:ina3221/in1_input*curr1_input|' \
	-e 's|/sys/devices/pci0000:00/0000:00:05.0/virtio\*/|/sys/devices/pci0000:00/|' \
	"$src/board/qemu-x86_64/board.ini" > "$tmp/board.ini"

sample_row() {	# sample_row LABEL SYSFS PROC BOARD
	: > "$tmp/runs"
	for _ in 1 2 3; do "$bin/powerd-sample" "$2" "$3" "$4" 1000 >> "$tmp/runs"; done
	mean=$(awk '{print $6}' "$tmp/runs" | sort -n | sed -n 2p)
	max=$(awk '{print $8}' "$tmp/runs" | sort -n | sed -n 2p)
	n=$(awk '{print $2}' "$tmp/runs" | sed -n 1p)
	printf '| %s | %s | %s | %s |\n' "$1" "$n" "$mean" "$max"
}

cat > "$tmp/powerd.ini" <<EOT
[powerd]
board = $tmp/board.ini
sysfs_root = $sys
proc_root = $proc
metrics_dir = $tmp/metrics
raidd_socket = $tmp/none.sock
EOT
"$bin/powerd" -f -S "$tmp/run" -c "$tmp/powerd.ini" 2> "$tmp/powerd.log" &
pid=$!
sleep 2
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
t0=$(ticks)
sleep "$secs"
t1=$(ticks)
hz=$(getconf CLK_TCK)
cpu_h=$(awk -v d=$((t1 - t0)) -v hz="$hz" -v s="$secs" 'BEGIN { printf "%.1f", d / hz * 3600 / s }')
rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status")

{
	echo "## powerd"
	echo
	echo "\`bench/powerd.sh\` ($(date -u +%Y-%m-%d), $(nproc) cores shared with other work):"
	echo "one sample reads every source (each sensor, diskstats, stat, the ports' carrier),"
	echo "computes the model, the state and the energy; median of three runs of 1000 samples"
	echo "(every 30th sample also rescans the chips and the disks)."
	echo
	echo "| tree | sensors | mean µs per sample | max µs |"
	echo "|---|---|---|---|"
	sample_row "fixture: 4 chips, RAPL, 2 bay disks" "$sys" "$proc" "$tmp/board.ini"
	sample_row "this host's /sys and /proc" /sys /proc "$src/board/qemu-x86_64/board.ini"
	echo
	echo "powerd idle on the fixture at the 1 s default for $secs s, powerd.prom written"
	echo "every second: **$cpu_h CPU seconds per hour**, RSS **$rss KiB**."
} > "$tmp/section.md"
sh "$src/bench/md-section.sh" "$out" powerd < "$tmp/section.md"
cat "$tmp/section.md"
