#!/usr/bin/env python3
"""The virtual NAS of board/qemu-x86_64: qemu command line, disks, QMP faults.

Used by `make run` (interactive, `vnas.py run`) and by tests/system/run-scenario.

Machine: qemu-system-x86_64 -machine pc (software emulation), 2 CPUs.
  00:05.0 virtio-scsi controller; bay N = scsi-hd at target N, LUN 0, hot-pluggable
  00:06.0 / 00:07.0 virtio-net ports 1 and 2 (user networking, restrict=on:
          no traffic leaves the VM's private network)
  00:08.0 virtio-blk "flash" (persistent /etc/nas)
  00:09.0 virtio-serial: nas.vmctl (fault requests), nas.scenario (script
          output), nas.api.<daemon> (API bridges for `make run`)
Disks are sparse files; each bay's disk has a serial NAS<bay>-<generation>.
Each bay is held to a 7200 rpm disk's rates (DISK_RATE, a QEMU throttle group
per bay; --disk-rate changes or lifts it): under software emulation the
guest's CPU, not the disk, would otherwise set every I/O figure (Decision 137).
"""

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DAEMONS = ("raidd", "cryptd", "netd", "powerd")
SCSI_ADDR, PORT_ADDR, FLASH_ADDR, SERIAL_ADDR = 0x5, (0x6, 0x7), 0x8, 0x9
FLASH_MB = 16
# A 7200 rpm disk's sustained rates: requests per second (the random 4 KiB
# figure of a NAS disk with command queueing) and MB/s (its outer tracks).
DISK_RATE = "200:160"


def parse_rate(text):
    """'IOPS:MBPS' -> (iops, bytes per second); 'off' -> None."""
    if text == "off":
        return None
    try:
        iops, mbps = (int(x) for x in text.split(":"))
    except ValueError:
        raise ValueError("disk rate %r: IOPS:MBPS (e.g. 200:160) or off" % text)
    if iops <= 0 or mbps <= 0:
        raise ValueError("disk rate %r: both figures above 0" % text)
    return iops, mbps * 1000 * 1000
# The machine of each virtual board; the devices and their PCI slots are the
# same on both, so board.ini differs only in the PCI host's sysfs prefix.
PLATFORMS = {
    "qemu-x86_64": {"qemu": "qemu-system-x86_64", "machine": "pc,accel=tcg", "cpu": "max",
                    "bus": "pci.0", "console": "ttyS0", "mem": 1024},
    "qemu-aarch64": {"qemu": "qemu-system-aarch64", "machine": "virt,accel=tcg",
                     "cpu": "cortex-a53", "bus": "pcie.0", "console": "ttyAMA0", "mem": 512},
}


def parse_size(text):
    """'512M', '2G', '1T', '4096' -> bytes."""
    text = text.strip().upper().rstrip("B").rstrip("I")
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    if text and text[-1] in mult:
        return int(float(text[:-1]) * mult[text[-1]])
    return int(text)


class QMPError(Exception):
    pass


class QMP:
    """Minimal synchronous QMP client on an accepted socket."""

    def __init__(self, sock):
        self.sock = sock
        self.buf = b""
        self.events = []
        greeting = self._read()
        if "QMP" not in greeting:
            raise QMPError("no QMP greeting")
        self.cmd("qmp_capabilities")

    def _read(self, timeout=60):
        self.sock.settimeout(timeout)
        while b"\n" not in self.buf:
            data = self.sock.recv(65536)
            if not data:
                raise QMPError("QMP connection closed")
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def cmd(self, execute, **args):
        msg = {"execute": execute}
        if args:
            msg["arguments"] = args
        self.sock.sendall(json.dumps(msg).encode() + b"\n")
        while True:
            reply = self._read()
            if "event" in reply:
                self.events.append(reply)
            elif "error" in reply:
                raise QMPError("%s: %s" % (execute, reply["error"].get("desc")))
            elif "return" in reply:
                return reply["return"]

    def wait_event(self, name, match=None, timeout=30):
        deadline = time.monotonic() + timeout
        while True:
            for i, ev in enumerate(self.events):
                if ev["event"] == name and all(
                        ev.get("data", {}).get(k) == v for k, v in (match or {}).items()):
                    del self.events[i]
                    return ev
            left = deadline - time.monotonic()
            if left <= 0:
                raise QMPError("timed out waiting for %s" % name)
            self.events.append(self._read(left))


class Bay:
    def __init__(self, index, workdir, size, rate=None):
        self.index = index
        self.rate = rate
        self.workdir = workdir
        self.size = size
        self.gen = 0
        self.present = False
        self.error = False
        self.path = None

    @property
    def node(self):
        return "bay%d-g%d" % (self.index, self.gen)

    @property
    def serial(self):
        # The serial belongs to the disk: it moves with it in disk-swap.
        return self.disk_serial

    def new_disk(self, size=None):
        """A fresh blank sparse disk in this bay."""
        self.gen += 1
        self.size = size or self.size
        self.path = os.path.join(self.workdir, "bay%d-%d.img" % (self.index, self.gen))
        self.disk_serial = "NAS%d-%04d" % (self.index, self.gen)
        with open(self.path, "wb") as f:
            f.truncate(self.size)
        self.present = True
        self.error = False

    @property
    def raw_node(self):
        """The raw node: the device's drive, or under the throttle when held."""
        return self.node + "-raw" if self.rate else self.node

    @property
    def group(self):
        return "rate-bay%d" % self.index

    def group_args(self):
        """The bay's throttle group (it outlives its disks: one per bay per boot)."""
        iops, bps = self.rate
        return {"qom-type": "throttle-group", "id": self.group,
                "limits": {"iops-total": iops, "bps-total": bps}}

    def blockdev_args(self):
        """file node, blkdebug node (faulty disk), raw node and throttle node
        (the drive, when the bay is held to a rate), as -blockdev JSON."""
        nodes = [{"driver": "file", "node-name": self.node + "-file",
                  "filename": self.path}]
        child = self.node + "-file"
        if self.error:
            nodes.append(self.blkdebug(child))
            child = self.node + "-err"
        nodes.append({"driver": "raw", "node-name": self.raw_node, "file": child})
        if self.rate:
            nodes.append({"driver": "throttle", "node-name": self.node,
                          "throttle-group": self.group, "file": self.raw_node})
        return nodes

    def blkdebug(self, child):
        rules = [{"event": ev, "errno": 5, "once": False}
                 for ev in ("read_aio", "write_aio", "flush_to_disk", "flush_to_os")]
        return {"driver": "blkdebug", "node-name": self.node + "-err",
                "image": child, "inject-error": rules}

    def device_args(self):
        return {"driver": "scsi-hd", "id": "bay%d" % self.index, "bus": "scsi0.0",
                "channel": 0, "scsi-id": self.index, "lun": 0, "drive": self.node,
                "serial": self.serial, "rotation_rate": 7200, "share-rw": True,
                "rerror": "report", "werror": "report"}


class VNAS:
    """One virtual NAS: its disks persist across boots (reboot, power cut)."""

    def __init__(self, image_dir, variant="test", bays=2, sizes=None, workdir=None,
                 board=None, mem=None, smp=2, api_dir=None, extra_initrd=None,
                 platform="qemu-x86_64", line_pc=False, disk_rate=DISK_RATE):
        self.line_pc = line_pc
        rate = parse_rate(disk_rate)
        self.image_dir = os.path.abspath(image_dir)
        self.variant = variant
        self.platform = platform
        self.mach = PLATFORMS[platform]
        self.board = board or (platform if bays <= 2 else platform + "-4bay")
        self.workdir = workdir or tempfile.mkdtemp(prefix="vnas-")
        self.mem, self.smp = mem or self.mach["mem"], smp
        self.api_dir = api_dir
        self.extra_initrd = extra_initrd
        sizes = list(sizes or [])
        self.bays = []
        for i in range(1, bays + 1):
            size = sizes[i - 1] if i <= len(sizes) else (sizes[-1] if sizes else 1 << 30)
            bay = Bay(i, self.workdir, size, rate)
            bay.new_disk()
            self.bays.append(bay)
        self.flash = os.path.join(self.workdir, "flash.img")
        self._make_flash()
        self.proc = None
        self.qmp = None
        self.boots = 0
        self.started = None
        self.pending_swaps = []

    def move_to(self, platform, image_dir):
        """The disks go into another board (before its next boot): that
        board's machine and image, a blank flash of its own."""
        self.platform, self.mach = platform, PLATFORMS[platform]
        self.board = platform if len(self.bays) <= 2 else platform + "-4bay"
        self.mem = self.mach["mem"]
        self.image_dir = os.path.abspath(image_dir)
        self._make_flash()

    def _make_flash(self):
        with open(self.flash, "wb") as f:
            f.truncate(FLASH_MB << 20)
        mkfs = shutil.which("mkfs.ext4") or "/sbin/mkfs.ext4"
        if os.path.exists(mkfs):
            subprocess.run([mkfs, "-q", "-F", "-L", "nas-config",
                            self.flash], check=True)

    # ---- files of the image ----
    def kernel(self):
        return os.path.join(self.image_dir, "vmlinuz")

    def initrd(self):
        base = os.path.join(self.image_dir, "%s-%s.cpio.zst" % (self.platform, self.variant))
        if not self.extra_initrd:
            return base
        combined = os.path.join(self.workdir, "initrd.img")
        with open(combined, "wb") as out:
            with open(base, "rb") as f:
                shutil.copyfileobj(f, out)
            out.write(b"\0" * (-out.tell() % 4))
            out.write(self.extra_initrd)
        return combined

    # ---- qemu ----
    def command(self, console, sockets, append=""):
        m = self.mach
        cmd = [m["qemu"], "-machine", m["machine"], "-cpu", m["cpu"],
               "-smp", str(self.smp), "-m", str(self.mem), "-nodefaults", "-no-user-config",
               "-display", "none", "-no-reboot",
               "-kernel", self.kernel(), "-initrd", self.initrd(),
               "-append", "console=%s loglevel=4 panic=-1 nas.board=%s nas.boot=%d %s"
               % (m["console"], self.board, self.boots, append)]
        if console == "stdio":
            cmd += ["-serial", "mon:stdio"]
        else:
            cmd += ["-chardev", "file,id=con,path=%s" % console, "-serial", "chardev:con"]
        cmd += ["-device", "virtio-scsi-pci,id=scsi0,bus=%s,addr=0x%x" % (m["bus"], SCSI_ADDR)]
        for bay in self.bays:
            if bay.rate:
                cmd += ["-object", json.dumps(bay.group_args())]
            if bay.present:
                for node in bay.blockdev_args():
                    cmd += ["-blockdev", json.dumps(node)]
                cmd += ["-device", json.dumps(bay.device_args())]
        for i, addr in enumerate(PORT_ADDR, 1):
            if self.line_pc:
                cmd += ["-netdev", wire_netdev(self.workdir, i, "nas"), "-device",
                        "virtio-net-pci,netdev=net%d,id=port%d,mac=52:54:00:4e:41:%02x,"
                        "speed=1000,duplex=full,bus=%s,addr=0x%x" % (i, i, i, m["bus"], addr)]
                continue
            cmd += ["-netdev", "user,id=net%d,restrict=on" % i,
                    "-device", "virtio-net-pci,netdev=net%d,id=port%d,mac=52:54:00:4e:41:%02x,"
                    "bus=%s,addr=0x%x" % (i, i, i, m["bus"], addr)]
        cmd += ["-blockdev", json.dumps({"driver": "file", "node-name": "flash-file",
                                         "filename": self.flash}),
                "-blockdev", "driver=raw,node-name=flash,file=flash-file",
                "-device", "virtio-blk-pci,drive=flash,serial=NASFLASH,bus=%s,addr=0x%x"
                % (m["bus"], FLASH_ADDR),
                "-device", "virtio-serial-pci,id=vser,bus=%s,addr=0x%x" % (m["bus"], SERIAL_ADDR)]
        for name, path, server in sockets:
            opts = ",server=on,wait=off" if server else ""
            cmd += ["-chardev", "socket,id=ch-%s,path=%s%s" % (name, path, opts)]
            if name == "qmp":
                cmd += ["-mon", "chardev=ch-qmp,mode=control"]
            else:
                cmd += ["-device", "virtserialport,bus=vser.0,chardev=ch-%s,name=nas.%s"
                        % (name, name)]
        return cmd

    def api_sockets(self):
        if not self.api_dir:
            return []
        os.makedirs(self.api_dir, exist_ok=True)
        socks = []
        for d in DAEMONS:
            path = os.path.join(self.api_dir, d + ".sock")
            if os.path.exists(path):
                os.unlink(path)
            socks.append(("api." + d, path, True))
        return socks

    def start(self, console, channels=("vmctl", "scenario"), append=""):
        """Boot; returns {channel: accepted socket}.  QMP is always connected."""
        self.boots += 1
        self.apply_swaps()
        listeners, sockets = {}, []
        for name in ("qmp",) + tuple(channels):
            path = os.path.join(self.workdir, name + ".sock")
            if os.path.exists(path):
                os.unlink(path)
            ls = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            ls.bind(path)
            ls.listen(1)
            listeners[name] = ls
            sockets.append((name, path, False))
        cmd = self.command(console, sockets + self.api_sockets(), append)
        with open(os.path.join(self.workdir, "qemu.cmd"), "w") as f:
            f.write(" ".join("'%s'" % c for c in cmd) + "\n")
        self.started = time.monotonic()
        self.proc = subprocess.Popen(cmd, stdin=None if console == "stdio" else subprocess.DEVNULL)
        conns = {}
        for name, ls in listeners.items():
            ls.settimeout(30)
            try:
                conns[name], _ = ls.accept()
            except socket.timeout:
                self.kill()
                raise RuntimeError("qemu did not connect its %s channel" % name)
            ls.close()
        self.qmp = QMP(conns.pop("qmp"))
        return conns

    def kill(self):
        """Power cut: the VM stops at once, nothing is flushed by the guest."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    # ---- faults ----
    def bay(self, arg):
        try:
            bay = self.bays[int(arg) - 1]
        except (ValueError, IndexError):
            raise QMPError("no bay %s (bays 1..%d)" % (arg, len(self.bays)))
        return bay

    def disk_pull(self, arg):
        bay = self.bay(arg)
        if not bay.present:
            raise QMPError("bay %d is empty" % bay.index)
        self.qmp.cmd("device_del", id="bay%d" % bay.index)
        self.qmp.wait_event("DEVICE_DELETED", {"device": "bay%d" % bay.index})
        for node in reversed(bay.blockdev_args()):
            self.qmp.cmd("blockdev-del", **{"node-name": node["node-name"]})
        bay.present = False

    def disk_reinsert(self, arg):
        """The disk last pulled from the bay goes back in, data and serial intact."""
        bay = self.bay(arg)
        if bay.present:
            raise QMPError("bay %d holds a disk; pull it first" % bay.index)
        if not bay.path or not os.path.exists(bay.path):
            raise QMPError("bay %d has no pulled disk to put back" % bay.index)
        bay.present = True
        for node in bay.blockdev_args():
            self.qmp.cmd("blockdev-add", **node)
        self.qmp.cmd("device_add", **bay.device_args())

    def disk_insert(self, arg, size=None):
        bay = self.bay(arg)
        if bay.present:
            raise QMPError("bay %d holds a disk; pull it first" % bay.index)
        bay.new_disk(parse_size(size) if size else None)
        for node in bay.blockdev_args():
            self.qmp.cmd("blockdev-add", **node)
        self.qmp.cmd("device_add", **bay.device_args())

    def disk_resize(self, arg, size):
        """The bay's disk grows in place, as a LUN grown on a storage array
        would (QMP block_resize); returns the new size in bytes.  The guest
        hears of it through virtio-scsi's capacity-changed event."""
        bay = self.bay(arg)
        if not bay.present:
            raise QMPError("bay %d is empty" % bay.index)
        try:
            new = parse_size(size)
        except ValueError:
            raise QMPError("disk-resize: bad size %r" % size)
        if new < bay.size or new % 512:
            raise QMPError("disk-resize only grows, to a multiple of 512 bytes "
                           "(bay %d has %d)" % (bay.index, bay.size))
        self.qmp.cmd("block_resize", **{"node-name": bay.node, "size": new})
        bay.size = new
        return new

    def disk_swap(self, a, b):
        """The disks of bays a and b trade places at the next boot."""
        x, y = self.bay(a), self.bay(b)
        if x is y:
            raise QMPError("disk-swap needs two different bays")
        self.pending_swaps.append((x, y))

    def apply_swaps(self):
        for x, y in self.pending_swaps:
            for attr in ("path", "gen", "size", "error", "present", "disk_serial"):
                vx, vy = getattr(x, attr), getattr(y, attr)
                setattr(x, attr, vy)
                setattr(y, attr, vx)
        self.pending_swaps = []

    def disk_error(self, arg):
        """From now on every read, write and flush of the bay's disk fails (EIO)."""
        bay = self.bay(arg)
        if not bay.present:
            raise QMPError("bay %d is empty" % bay.index)
        if bay.error:
            return
        self.qmp.cmd("blockdev-add", **bay.blkdebug(bay.node + "-file"))
        self.qmp.cmd("blockdev-reopen", options=[
            {"driver": "raw", "node-name": bay.raw_node, "file": bay.node + "-err"}])
        bay.error = True

    def disk_heal(self, arg):
        """From the next boot the bay's disk answers again (a fault a power
        cycle clears): it is attached without its blkdebug node. Live, the
        raw node cannot leave it: blockdev-reopen flushes first, and the
        flush fails."""
        bay = self.bay(arg)
        if not bay.present:
            raise QMPError("bay %d is empty" % bay.index)
        bay.error = False

    def set_link(self, arg, up):
        port = str(arg)
        for prefix in ("port", "lan"):
            if port.startswith(prefix):
                port = port[len(prefix):]
        if port not in ("1", "2"):
            raise QMPError("no port %s (ports 1, 2)" % arg)
        self.qmp.cmd("set_link", name="port" + port, up=up)


def wire_netdev(workdir, port, side):
    """One end of the cable between the NAS's port and the line PC's: a
    unix stream socket the NAS's qemu listens on and the line PC's connects
    to (so the NAS boots first; a frame sent before the line PC is up is
    lost, as on a real wire).  One boot of the NAS: a reboot cuts it."""
    path = os.path.join(workdir, "wire%d.sock" % port)
    if side == "nas":
        if os.path.exists(path):
            os.unlink(path)
        return "stream,id=net%d,server=on,addr.type=unix,addr.path=%s" % (port, path)
    return "stream,id=net%d,server=off,addr.type=unix,addr.path=%s" % (port, path)


class LinePC:
    """The line PC (docs/selftest.md): the same kernel with
    linepc.cpio.zst (scripts/image/mklinepc.sh), its eth0 and eth1 wired to
    the NAS's lan1 and lan2, bonded 802.3ad and held to RATE per port,
    serving iperf3 on 10.77.0.11-14."""

    def __init__(self, image_dir, workdir, rate="100mbit", mem=160):
        self.image_dir, self.workdir = os.path.abspath(image_dir), workdir
        self.rate, self.mem = rate, mem
        self.console = os.path.join(workdir, "linepc-console.log")
        self.proc = None

    def command(self):
        cmd = ["qemu-system-x86_64", "-machine", "pc,accel=tcg", "-cpu", "max",
               "-smp", "1", "-m", str(self.mem), "-nodefaults", "-no-user-config",
               "-display", "none", "-no-reboot",
               "-kernel", os.path.join(self.image_dir, "vmlinuz"),
               "-initrd", os.path.join(self.image_dir, "linepc.cpio.zst"),
               "-append", "console=ttyS0 loglevel=4 panic=-1 no_timer_check linepc.rate=%s" % self.rate,
               "-chardev", "file,id=con,path=%s" % self.console, "-serial", "chardev:con"]
        for i, addr in enumerate(PORT_ADDR, 1):
            cmd += ["-netdev", wire_netdev(self.workdir, i, "linepc"), "-device",
                    "virtio-net-pci,netdev=net%d,mac=52:54:00:4c:50:%02x,speed=1000,"
                    "duplex=full,bus=pci.0,addr=0x%x" % (i, i, addr)]
        return cmd

    def start(self):
        if not os.path.exists(os.path.join(self.image_dir, "linepc.cpio.zst")):
            raise RuntimeError("no %s/linepc.cpio.zst: make image" % self.image_dir)
        self.proc = subprocess.Popen(self.command(), stdin=subprocess.DEVNULL)

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()


def default_image_dir():
    out = os.environ.get("O") or os.path.join(os.path.dirname(os.path.dirname(HERE)), "build")
    return os.path.join(out, "image")


def main():
    ap = argparse.ArgumentParser(description="boot the virtual NAS interactively")
    ap.add_argument("command", choices=["run"])
    ap.add_argument("--image-dir", default=default_image_dir())
    ap.add_argument("--variant", default="test", choices=["test", "prod"])
    ap.add_argument("--bays", type=int, default=2, choices=[2, 4])
    ap.add_argument("--disk-size", default="1G")
    ap.add_argument("--api-dir", help="host directory for the daemons' API sockets")
    ap.add_argument("--keep", action="store_true", help="keep the disks afterwards")
    ap.add_argument("--board", default="qemu-x86_64", choices=sorted(PLATFORMS))
    ap.add_argument("--disk-rate", default=DISK_RATE, metavar="IOPS:MBPS|off",
                    help="each bay's rates (default %s, a 7200 rpm disk)" % DISK_RATE)
    args = ap.parse_args()
    try:
        parse_rate(args.disk_rate)
    except ValueError as e:
        ap.error(str(e))
    vm = VNAS(args.image_dir, args.variant, args.bays,
              [parse_size(s) for s in args.disk_size.split(",")], api_dir=args.api_dir,
              platform=args.board, disk_rate=args.disk_rate)
    print("vnas: disks in %s; console: Ctrl-A x quits" % vm.workdir, file=sys.stderr)
    if args.api_dir:
        print("vnas: API sockets: nasctl -S %s ..." % args.api_dir, file=sys.stderr)
    try:
        vm.start("stdio", channels=())
        vm.proc.wait()
    finally:
        vm.kill()
        if not args.keep:
            shutil.rmtree(vm.workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
