#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Write SIZE bytes of log-like text (logcat's threadtime format) to OUT:
the "log-like" data kind of scripts/bench-sync and the sync v2 tests.
Deterministic for a given SEED, so runs compare the same bytes.

usage: gen_logtext.py SIZE OUT [SEED]"""
import random
import sys

TAGS = ["ActivityManager", "PackageManager", "WindowManager", "InputDispatcher",
        "SurfaceFlinger", "chatty", "NetworkMonitor", "ConnectivityService", "wpa_supplicant",
        "BatteryStats", "AudioFlinger", "CameraService", "Zygote", "art", "OkHttp",
        "com.example.app", "SyncManager", "JobScheduler", "AlarmManager", "DisplayPowerController"]
MSGS = [
    "Start proc {p}:com.example.app{n}/u0a{u} for service {{com.example.app{n}/.SyncService}}",
    "Killing {p}:com.android.chrome/u0a{u} (adj {n}): empty #{m}",
    "Displayed com.example.app{n}/.MainActivity: +{m}ms",
    "Background concurrent copying GC freed {m}({k}KB) AllocSpace objects, {n}({n}MB) LOS objects, 49% free, {k}MB/{m}MB, paused {n}.{m}ms total {m}.{n}ms",
    "uid={u}({p}) com.example.app{n} identical {n} lines",
    "Channel is unrecoverably broken and will be disposed! fd={n}",
    "onSignalStrengthsChanged: rssi=-{n} level={m}",
    "Wakelock acquired: tag=*job*/com.example.app{n}/.Worker uid={u} ws=WorkSource{{{u}}}",
    "--> GET https://api.example.com/v{n}/items?page={m} http/1.1",
    "<-- 200 OK https://api.example.com/v{n}/items?page={m} ({k}ms, {m}-byte body)",
    "setSystemUiVisibility vis={k} mask=ffffffff oldVal={n} newVal={m} diff={k}",
    "Compiler allocated {k}KB to compile void com.example.app{n}.ui.Adapter.onBind(int)",
    "CTRL-EVENT-SCAN-RESULTS",
    "Audio track underrun: frames {k} session {n}",
]


def main():
    size = int(sys.argv[1])
    out = sys.argv[2]
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 16)
    t = 0.0
    written = 0
    with open(out, "w", encoding="ascii") as f:
        buf = []
        while written < size:
            t += rng.random() * 0.05
            sec = int(t)
            line = "11-23 %02d:%02d:%02d.%03d %5d %5d %s %s: %s\n" % (
                (sec // 3600) % 24, (sec // 60) % 60, sec % 60, int((t - sec) * 1000),
                rng.randrange(300, 32000), rng.randrange(300, 32000), rng.choice("VDIWE"),
                rng.choice(TAGS),
                rng.choice(MSGS).format(p=rng.randrange(1000, 32000), n=rng.randrange(0, 99),
                                        m=rng.randrange(0, 9999), k=rng.randrange(0, 99999),
                                        u=rng.randrange(10000, 10300)))
            buf.append(line)
            written += len(line)
            if len(buf) >= 4096:
                f.write("".join(buf))
                buf = []
        f.write("".join(buf))
        f.truncate(size)


if __name__ == "__main__":
    main()
