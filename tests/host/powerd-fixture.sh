#!/bin/sh
# Host test of powerd on fixture sysfs and proc trees: with a power
# sensor, then with the board's power model, power.status answers the
# watts and source the fixture means; a sensor that goes away is null,
# never 0 W; powerd.prom passes `promtool check metrics` (Debian package
# prometheus). Ends with "powerd-fixture: N passed, N failed"; appends
# "P F powerd-fixture" to $NAS_SUMMARY when set.
# Usage: powerd-fixture.sh BINDIR
set -u
bin=$1
tmp=$(mktemp -d /tmp/nas-powerd.XXXXXX)
pass=0 fail=0
pid= writer=

cleanup() {
	[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
	[ -n "$writer" ] && kill -KILL "$writer" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

. "$(dirname "$0")/check-lib.sh"

for tool in socat jq; do
	command -v $tool > /dev/null || { echo "powerd-fixture.sh: $tool is needed" >&2; exit 1; }
done

sys=$tmp/sys proc=$tmp/proc
mkdir -p "$sys/class/hwmon/hwmon0" "$sys/class/hwmon/hwmon1" "$sys/class/net/lan1" \
	"$sys/devices/pci0000:00/host0/target0:0:1/0:0:1:0" "$sys/block/sda" "$proc"
echo ina219 > "$sys/class/hwmon/hwmon0/name"
echo 12500000 > "$sys/class/hwmon/hwmon0/power1_input"
echo nct6775 > "$sys/class/hwmon/hwmon1/name"
echo 41000 > "$sys/class/hwmon/hwmon1/temp1_input"
echo 'CPU "core"' > "$sys/class/hwmon/hwmon1/temp1_label"
echo 900 > "$sys/class/hwmon/hwmon1/fan1_input"
echo 80 > "$sys/class/hwmon/hwmon1/pwm1"
echo 2 > "$sys/class/hwmon/hwmon1/pwm1_enable"
echo 1 > "$sys/class/net/lan1/carrier"
ln -s ../../devices/pci0000:00/host0/target0:0:1/0:0:1:0 "$sys/block/sda/device"
echo '   8       0 sda 10 0 80 5 0 0 0 0 0 10 10 0 0 0 0 0 0' > "$proc/diskstats"
printf 'cpu  100 0 100 800 0 0 0 0 0 0\ncpu0 1\n' > "$proc/stat"

board() {	# board SENSOR-LINE
	cat > "$tmp/board.ini" <<EOF
[board]
bays = 1
ports = 1
[bay1]
path = /sys/devices/pci0000:00/host*/target*:0:1/*:0:1:0
[port1]
name = lan1
path = /sys/devices/x/net/*
[power]
$1
idle_w = 8.0
cpu_w_per_load = 4.0
per_disk_active_w = 5.7
per_disk_idle_w = 3.4
per_disk_standby_w = 0.7
per_port_up_w = 0.4
psu_efficiency = 0.8
EOF
}
cat > "$tmp/powerd.ini" <<EOF
[powerd]
board = $tmp/board.ini
sysfs_root = $sys
proc_root = $proc
interval_ms = 200
metrics_dir = $tmp/metrics
[standby]
bay1 = 30
state_file = $tmp/powerd-standby
EOF

start() {
	"$bin/powerd" -f -S "$tmp/run" -c "$tmp/powerd.ini" 2> "$tmp/powerd.log" &
	pid=$!
	for _ in $(seq 100); do
		[ -S "$tmp/run/powerd.sock" ] && return 0
		sleep 0.1
	done
	return 1
}
stop() {
	kill -TERM "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	pid=
}
# answer JQ-FILTER: power.status satisfies it.
answer() {
	printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"power.status"}' |
		socat -t 2 - "UNIX-CONNECT:$tmp/run/powerd.sock" > "$tmp/ans" || return 1
	jq -e "$1" "$tmp/ans" > /dev/null || { cat "$tmp/ans"; return 1; }
}
# Samples come every 200 ms: wait for one that satisfies the filter.
eventually() {
	for _ in $(seq 50); do
		answer "$1" > /dev/null && return 0
		sleep 0.1
	done
	answer "$1"
}

# ---- a board with a power sensor ----
board "sensor = hwmon:ina219/power1_input"
check "powerd starts on the fixture tree" start
# eventually: a read that has not come back by the next sample is shown
# "stalled" (null) until it does, as under a loaded CI host
check "power.status: 12.5 W from sensor:hwmon:ina219/power1_input" \
	eventually '.result.watts == 12.5 and .result.source == "sensor:hwmon:ina219/power1_input"
		and .result.state == "idle"'
check "powerd.prom is written" test -s "$tmp/metrics/powerd.prom"
if command -v promtool > /dev/null; then
	check "powerd.prom passes promtool check metrics" \
		sh -c "promtool check metrics < '$tmp/metrics/powerd.prom'"
else
	bad "promtool is not installed (Debian package prometheus)"
fi
# A sample whose reads are not back by the next (200 ms, a loaded machine)
# is stalled: no watts in that one; the file is rewritten at each sample.
check "powerd.prom has the watts, the energy per state and the temperature" \
	sh -c "for i in \$(seq 50); do sleep 0.1; grep -q '^nas_power_watts{source=\"sensor:hwmon:ina219/power1_input\"} 12.5$' \
		'$tmp/metrics/powerd.prom' &&
	grep -q '^nas_energy_joules_total{state=\"idle\"} ' '$tmp/metrics/powerd.prom' &&
	grep -q '^nas_disk_power_state{bay=\"1\",disk=\"sda\",state=\"idle\"} 1$' \
		'$tmp/metrics/powerd.prom' &&
	grep -qF 'nas_temperature_celsius{sensor=\"hwmon:nct6775/temp1_input\",label=\"CPU \\\"core\\\"\"} 41' \
		'$tmp/metrics/powerd.prom' && exit 0; done; exit 1"
rm "$sys/class/hwmon/hwmon0/power1_input"
check "a sensor that vanished is null with its reason, never 0 W" \
	eventually '.result.watts == null and .result.error == "vanished"'
check "and nas_power_watts is absent from powerd.prom" \
	sh -c "! grep -q '^nas_power_watts' '$tmp/metrics/powerd.prom'"
echo garbage > "$sys/class/hwmon/hwmon0/power1_input"
check "garbage in the sensor is null with its reason" \
	eventually '.result.watts == null and .result.error == "garbage"'
stop

# ---- the board's power model: (8 + 3.4 + 0.4) / 0.8 = 14.75 W idle ----
board "sensor = model"
check "powerd starts with the model" start
check "power.status: 14.75 W from the model, idle" \
	answer '.result.source == "model" and .result.state == "idle"
		and (.result.watts - 14.75 | fabs) < 1e-9'
# The disk keeps writing (a state lasts one sample past the last change,
# shorter than a loaded machine's poll): diskstats replaced whole each time.
(w=4; while :; do
	w=$((w + 4))
	echo "   8       0 sda 10 0 80 5 $w 0 32 0 0 10 10 0 0 0 0 0 0" > "$proc/diskstats.new"
	mv "$proc/diskstats.new" "$proc/diskstats"
	sleep 0.05
done) &
writer=$!
check "a write makes it writing at (8 + 5.7 + 0.4) / 0.8 = 17.625 W" \
	eventually '.result.state == "writing" and (.result.watts - 17.625 | fabs) < 1e-9'
kill "$writer"
wait "$writer" 2>/dev/null
writer=
check "powerd.prom still passes promtool" \
	sh -c "! command -v promtool > /dev/null ||
		promtool check metrics < '$tmp/metrics/powerd.prom'"
stop

# ---- drive.set survives a restart ----
# call METHOD PARAMS JQ-FILTER
call() {
	printf '{"jsonrpc":"2.0","id":1,"method":"%s","params":%s}\n' "$1" "$2" |
		socat -t 2 - "UNIX-CONNECT:$tmp/run/powerd.sock" > "$tmp/ans" || return 1
	jq -e "$3" "$tmp/ans" > /dev/null || { cat "$tmp/ans"; return 1; }
}
check "powerd starts again" start
check "drive.list: bay1's minutes from powerd.ini (30)" \
	call drive.list '{}' '.result.drives[0].standby_minutes == 30'
check "drive.set bay1 to 45 minutes" \
	call drive.set '{"disk":"bay1","standby_minutes":45}' '.result.standby_minutes == 45'
check "the state file has it, whole" \
	sh -c "tail -n 1 '$tmp/powerd-standby' | grep -qx 'bay1 45' && ! ls '$tmp'/powerd-standby.new 2>/dev/null"
stop
check "powerd starts after the restart" start
check "drive.list: bay1 keeps 45 minutes across the restart" \
	call drive.list '{}' '.result.drives[0].standby_minutes == 45'
check "drive.set -1 gives bay1 back to powerd.ini" \
	call drive.set '{"disk":"bay1","standby_minutes":-1}' '.result.standby_minutes == 30'

# ---- nasctl fan set ----
check "nasctl fan set --mode manual --pwm 120 writes pwm1_enable 1, pwm1 120" \
	sh -c "'$bin/nasctl' -S '$tmp/run' fan set hwmon:nct6775/pwm1 --mode manual --pwm 120 > /dev/null &&
		[ \"\$(cat '$sys/class/hwmon/hwmon1/pwm1_enable')\" = 1 ] &&
		[ \"\$(cat '$sys/class/hwmon/hwmon1/pwm1')\" = 120 ]"
check "nasctl fan set --mode auto gives it back to the chip (2)" \
	sh -c "'$bin/nasctl' -S '$tmp/run' fan set hwmon:nct6775/pwm1 --mode auto > /dev/null &&
		[ \"\$(cat '$sys/class/hwmon/hwmon1/pwm1_enable')\" = 2 ]"
check "nasctl fan set --mode manual without --pwm is refused, nothing written" \
	sh -c "! '$bin/nasctl' -S '$tmp/run' fan set hwmon:nct6775/pwm1 --mode manual > /dev/null 2>&1 &&
		[ \"\$(cat '$sys/class/hwmon/hwmon1/pwm1_enable')\" = 2 ]"
stop

echo "powerd-fixture: $pass passed, $fail failed"
[ -n "${NAS_SUMMARY:-}" ] && echo "$pass $fail powerd-fixture" >> "$NAS_SUMMARY"
[ "$fail" -eq 0 ]
