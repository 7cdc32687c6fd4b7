/* SPDX-License-Identifier: Apache-2.0 */
/* adbc-snap help: the long help of every command, in one table, shown by
 * `adbc-snap help COMMAND` and `adbc-snap COMMAND --help`.
 *
 * Every command in the dispatch tables needs an entry here (a test walks
 * the tables and fails for one without). The first line of `--help` is the
 * command's usage from its table; the text below explains it. */
#include "snap.h"

#include <string.h>

typedef struct snap_help {
    const char *name;
    const char *text;
} snap_help;

#define JSON_NOTE "--json   print the result as one JSON object on stdout; errors too"

static const snap_help help_table[] = {
    {"agent",
     "Runs one task of the agent on the selected device (docs/agent.md): each step\n"
     "reads the screen, asks the model for one tool call, checks it and runs it,\n"
     "and is printed as it happens. Exits 0 only when the model ends the task as\n"
     "done; otherwise 3 after max steps, 4 on a safety stop (a payment, purchase\n"
     "or destructive screen), 5 when cancelled, 1 on a failure, 130 on Ctrl-C,\n"
     "saying why on stderr. Without GOAL on a terminal: interactive, goals typed as\n"
     "lines, with /stop, /model NAME, /setting KEY VALUE and /help.\n\n"
     "  --model NAME       the model (else the provider's environment, see\n"
     "                     docs/agent.md); --provider openai|anthropic,\n"
     "                     --base-url URL, --api-key-env VAR, --api-key-file F,\n"
     "                     --model-timeout MS, --max-tokens N, --budget-tokens N,\n"
     "                     --budget-usd D set the rest\n"
     "  --max-steps N      at most N steps, 1..50 (default 15)\n"
     "  --step-delay MS    pause after each act (default 0)\n"
     "  --hint-after N, --back-after N  stuck handling (default 3 and 5)\n"
     "  --vision           send the screenshot with the refs marked\n"
     "  --allow SERIAL     drive this physical device (emulators always may)\n"
     "  --allow-shell      offer the model the shell tool\n"
     "  --trace FILE       write every prompt, answer, action and screen to FILE\n"
     "                     (JSON Lines, created 0600; it must not exist)\n"
     "  --json             one JSON object per step and one for the end\n"
     "  --config FILE      [model] and [agent] settings (default\n"
     "                     $XDG_CONFIG_HOME/adbc/agent.toml when it exists); the\n"
     "                     command line wins\n"
     "  --serve URL        run the task on the adbc-serve at URL (its tasks API) and\n"
     "                     print its steps as they come; Ctrl-C cancels it there\n"
     "  --token-file F     that server's token (else ADBC_SERVE_TOKEN)"},
    {"farm",
     "A farm of adbc-serve nodes sharing their devices and one task queue on\n"
     "Redis (docs/farm.md), through any node's API at --serve URL:\n\n"
     "  devices       every live node's devices (node, serial, model, SDK, kind,\n"
     "                state, busy)\n"
     "  submit GOAL   queue a task, then print its steps as `agent` does; exits as\n"
     "                `agent` (0 done); Ctrl-C cancels it in the farm\n"
     "  status ID     status, node, device, attempts, steps; its answer or reason\n"
     "  watch ID      follow a task's events to its end (Ctrl-C stops watching)\n"
     "  cancel ID     cancel it wherever it runs\n\n"
     "  --serve URL        any node, http://HOST:PORT\n"
     "  --token-file F     that node's token (else ADBC_SERVE_TOKEN)\n"
     "  --model NAME, --max-steps N   the task's (else the running node's settings)\n"
     "  --serial S, --device-model M, --min-sdk N, --emulator | --physical\n"
     "                     which devices may run it (every one given must match)\n"
     "  --json             JSON instead of text"},
    {"webviews",
     "Lists the DevTools sockets the device exposes (abstract sockets named\n"
     "webview_devtools_remote_<pid>, chrome_devtools_remote, *_devtools_remote*\n"
     "in /proc/net/unix), the package owning each pid, and each socket's pages\n"
     "from GET /json/list sent over a stream straight to the socket (no local\n"
     "port). Apps show up once they enable WebView debugging.\n\n"
     "  " JSON_NOTE "\n"
     "  --forward  print an `adbc-snap forward` command per socket"},
    {"forward",
     "Listens on each LOCAL and relays every connection over its own stream to\n"
     "REMOTE on the device.\n\n"
     "When adb's server answers at adb's address (adbc-serve --adb-server,\n"
     "`adbc-snap start-server`) and holds the device, it holds the forward, as\n"
     "with adb: `adb forward --list` and `forward --list` show the same list.\n"
     "Else, through a running session (adbc-snap -s DEV session start), the\n"
     "session's server holds it. Either way the command returns at once\n"
     "(printing the port of a new TCP listener, as adb), and the forward lasts\n"
     "until removed, until its server stops, or until the device's connection\n"
     "is lost. Without either (or --no-session), or with -v or --half-close, it\n"
     "relays until interrupted or the device goes away (every relayed connection\n"
     "is then closed, exit 1 with a message), printing \"LOCAL REMOTE\" per pair\n"
     "once listening, with tcp:0 resolved to the port chosen.\n\n"
     "  LOCAL    tcp:PORT (127.0.0.1), tcp:HOST:PORT ([::1]:PORT for IPv6),\n"
     "           localabstract:NAME, localfilesystem:PATH\n"
     "  REMOTE   tcp:PORT, localabstract:NAME, localreserved:NAME,\n"
     "           localfilesystem:PATH, jdwp:PID, vsock:CID:PORT\n"
     "  --no-rebind  fail if the session holds LOCAL already (else it is pointed\n"
     "           at the new REMOTE)\n"
     "  --list   the forwards every running session holds, as adb lists them\n"
     "           (SERIAL LOCAL REMOTE)\n"
     "  --remove LOCAL   remove one held forward;  --remove-all   remove every\n"
     "           one (of the named device's session, else of every session)\n"
     "  -v       a line per connection on stderr (opened, refused, closed + bytes)\n"
     "  --half-close  after a local peer's end of file keep delivering the\n"
     "           device's answer until the device closes (default: close, as adb)"},
    {"reverse",
     "Makes the device listen on each REMOTE (a rule adbd keeps) and relays the\n"
     "connections it gets to LOCAL on this host. Through a running session the\n"
     "session's server holds the rule and relays (the command returns at once,\n"
     "printing a chosen port, as adb); else until interrupted, and the device\n"
     "drops the rules when the connection ends. Streams the device opens for\n"
     "anything but these LOCAL destinations are refused. Prints \"REMOTE LOCAL\"\n"
     "per rule, with tcp:0 resolved to the device's port.\n\n"
     "  -v            a line per connection on stderr\n"
     "  --no-rebind   fail if the device has a rule for REMOTE already\n"
     "  --list        the device's rules (reverse:list-forward)\n"
     "  --remove REMOTE   remove one rule;  --remove-all   remove every rule"},
    {"info",
     "The device's state, the properties and features of its connection banner,\n"
     "and the protocol version, maximum payload and delayed-ack setting agreed.\n\n"
     "  " JSON_NOTE},
    {"shell",
     "Runs CMD... (joined with spaces, as adb does) in the device's shell. With\n"
     "shell v2 stdout and stderr stay apart and adbc-snap exits with the\n"
     "command's own status; stdin is forwarded when it is not a terminal.\n"
     "Without CMD, on a terminal: an interactive shell on a PTY of the device\n"
     "(our terminal raw meanwhile, and restored however it ends; the window\n"
     "size sent at start and on every change; ^C goes to the device; the exit\n"
     "status is the shell's). Without CMD and stdin not a terminal, the\n"
     "device's shell reads its commands from stdin.\n\n"
     "  -n       do not forward stdin\n"
     "  -t       a PTY for CMD when stdin is a terminal; -tt: always\n"
     "  -T       no PTY, even without CMD\n"
     "  -x       shell v1, as older adbd: no exit status, stderr mixed in\n"
     "  -e C     the escape character on a raw terminal (default ~; none: no\n"
     "           escape): C. at the start of a line disconnects (exit 0), CC\n"
     "           sends C, as adb and ssh\n"
     "  --json   collect the output: {\"exit_code\", \"stdout\", \"stderr\"} (as\n"
     "           \"stdout_base64\"/\"stderr_base64\" when not UTF-8); stdin is\n"
     "           not forwarded. The exit status is the command's as without it.\n\n"
     "Options (combinable as in -nT) must come before CMD; everything from CMD on\n"
     "goes to the device; -- ends the options."},
    {"exec-out",
     "adb's name for exec: runs CMD... with the exec: service, the output byte\n"
     "for byte (`exec-out screencap -p > s.png`). Same options as exec."},
    {"root",
     "Asks adbd to restart as root (root:), as `adb root`: prints adbd's answer\n"
     "(\"restarting adbd as root\", \"adbd is already running as root\", \"adbd\n"
     "cannot run as root in production builds\"); after a restart waits until the\n"
     "device answers again (within --timeout; exit 1 when it does not)."},
    {"unroot", "As root, the other way (unroot:): adbd restarts without root."},
    {"reboot",
     "Reboots the device (reboot:TARGET), normally or into the bootloader,\n"
     "recovery, sideload, sideload-auto-reboot or fastboot (userspace)."},
    {"remount",
     "Remounts the system partitions read-write (remount:, adbd runs\n"
     "/system/bin/remount): needs root; prints what the device says.\n\n"
     "  -R   reboot into the right state when needed"},
    {"tcpip",
     "Restarts adbd listening on TCP PORT (tcpip:PORT), usually over USB:\n"
     "afterwards `adbc-snap connect HOST:PORT`."},
    {"usb", "Restarts adbd listening on USB again (usb:)."},
    {"disable-verity",
     "Disables dm-verity (disable-verity:; userdebug builds, as root); reboot\n"
     "afterwards when the device says so."},
    {"enable-verity", "Re-enables dm-verity (enable-verity:), as disable-verity."},
    {"connect",
     "Remembers a TCP device (HOST[:PORT], port 5555 by default) as `adb connect`\n"
     "does: a short handshake first (a device that does not answer is not kept;\n"
     "one that asks for the key prompt is, and listed unauthorized). Remembered\n"
     "devices are listed by `devices` and counted by the selection rule: with\n"
     "one remembered and no other device, it is the default. The list is a\n"
     "per-user file: $ADBC_DEVICES_FILE, else $XDG_STATE_HOME/adbc/devices, else\n"
     "~/.local/state/adbc/devices (docs/adb-compat.md)."},
    {"disconnect",
     "Forgets a remembered TCP device (HOST[:PORT]), or all of them. Exit 1 when\n"
     "the device is not remembered."},
    {"keygen",
     "Writes a new 2048-bit adb key to FILE (PEM, mode 0600) and its public line\n"
     "to FILE.pub, as `adb keygen` does."},
    {"version", "adb's first line (\"Android Debug Bridge version 1.0.41\": the protocol\n"
                "version adbc-snap speaks, which tools parse), then adbc-snap's version and\n"
                "the library's, and where the program is."},
    {"emu",
     "Sends COMMAND... (one line) to the emulator's console as `adb emu` does:\n"
     "emulator-N's console is TCP port N on 127.0.0.1 (the port below its adb\n"
     "port); \"auth TOKEN\" goes first when ~/.emulator_console_auth_token\n"
     "holds one, \"quit\" last; the console's answer is printed. Without -s,\n"
     "the only emulator (`adbc-snap emu help` lists the console's commands)."},
    {"jdwp",
     "Prints the pids of the processes hosting a JDWP transport (debuggable\n"
     "apps), one a line, from adbd's jdwp service, as `adb jdwp` does."},
    {"bugreport",
     "Takes a zipped bug report with the device's bugreportz (Android 7.0 and\n"
     "later), showing its progress on stderr, and copies it to PATH: a file\n"
     "(\".zip\" added when missing), or a directory (the device's name for it\n"
     "in there); without PATH, into the current directory. Prints \"Bug report\n"
     "copied to DEST\". A device without bugreportz gives its plain-text report\n"
     "on stdout when no PATH is given (`adbc-snap bugreport > bugreport.txt`).\n"
     "It takes minutes: no time bound but --timeout's, when given."},
    {"sideload",
     "Sends a full OTA package to a device in recovery's sideload mode\n"
     "(`adbc-snap reboot sideload`, or Apply update from ADB): the device asks\n"
     "for blocks of the file and gets them, until it says it is done. Progress\n"
     "and the total transferred (about 2x: read to verify, then to install) on\n"
     "stdout, as adb prints them."},
    {"exec",
     "Runs CMD... with the exec: service: no terminal, no shell protocol, the\n"
     "output byte for byte (use it for binary data: `exec cat FILE > copy`).\n\n"
     "  --json   collect the output: {\"stdout\"} (\"stdout_base64\" when not\n"
     "           UTF-8)\n\n"
     "Options must come before CMD; everything from CMD on goes to the device."},
    {"push",
     "Copies files or directory trees to the device with the sync service.\n"
     "Into an existing directory a source goes under its own name; several\n"
     "sources need a directory. Prints adb's summary line per source, and on a\n"
     "terminal a progress line (stderr).\n\n"
     "  -L       send the targets of symbolic links instead of the links\n"
     "  -n       dry run: send everything, the device writes nothing\n"
     "  --sync   only files that differ from the device's copy, as adb push\n"
     "           --sync: in a tree, same size and mtime is left out; a single\n"
     "           file, same mtime (counted as skipped)\n"
     "  --deadline S      end the whole command after S seconds, with an\n"
     "           error (--timeout bounds each wait for the device, not the whole)\n"
     "  --max-entries N   refuse a tree of more than N entries (default 1000000)\n"
     "  --max-depth N     refuse a tree deeper than N levels (default 64)\n"
     "  --json   one object for the run, printed at its end: totals \"files\",\n"
     "           \"skipped\", \"bytes\", \"seconds\", \"exit_status\", and \"sources\":\n"
     "           one entry per source with its \"target\" and counts, or its\n"
     "           \"error\"; no summary lines\n"
     "  -z ALG   compress with ALG: any, none, brotli, lz4 or zstd (sync v2;\n"
     "           an algorithm the device lacks is an error)\n"
     "  -Z       do not compress\n"
     "By default contents are compressed with the best algorithm both sides\n"
     "have (zstd, lz4, brotli) except over TCP to this machine and USB 3,\n"
     "where copying is faster than compressing."},
    {"pull",
     "Copies files or directory trees from the device. Files are written beside\n"
     "their destination and renamed into place only when complete. A tree is\n"
     "pulled as it is listed, many files in flight at once.\n\n"
     "  -a       keep the modification time and mode\n"
     "  --deadline S      end the whole command after S seconds, with an\n"
     "           error (--timeout bounds each wait for the device, not the whole)\n"
     "  --max-entries N   refuse a tree of more than N entries (default 1000000)\n"
     "  --max-depth N     refuse a tree deeper than N levels (default 64)\n"
     "  --json   one object for the run, printed at its end: totals \"files\",\n"
     "           \"skipped\", \"bytes\", \"seconds\", \"exit_status\", and \"sources\":\n"
     "           one entry per source with its \"target\" and counts, or its\n"
     "           \"error\"; no summary lines\n"
     "  -z ALG   compress with ALG: any, none, brotli, lz4 or zstd (sync v2;\n"
     "           an algorithm the device lacks is an error)\n"
     "  -Z       do not compress\n"
     "By default contents are compressed with the best algorithm both sides\n"
     "have (zstd, lz4, brotli) except over TCP to this machine and USB 3,\n"
     "where copying is faster than compressing."},
    {"ls",
     "Lists a directory on the device (names; -l: mode, size, time, name).\n\n"
     "  -l       long listing\n"
     "  " JSON_NOTE},
    {"stat",
     "What the device reports about a path: type, mode, size, modification time.\n\n"
     "  " JSON_NOTE},
    {"sync",
     "Pushes a local build to the device as `adb sync` does: each partition\n"
     "directory of $ANDROID_PRODUCT_OUT (data, odm, oem, product, system,\n"
     "system_ext, vendor; all of them, or the one named) goes to /PARTITION,\n"
     "leaving out the files the device already has (same size and type and\n"
     "mtime; a link whose device copy is not older). The tree is walked in\n"
     "adb's order; one summary line per partition, as adb prints it. A\n"
     "partition that fails (read-only before `remount`) ends the command.\n\n"
     "  -l       only list what would be pushed (\"would push: LOCAL -> REMOTE\")\n"
     "  -n       dry run: send everything, the device writes nothing\n"
     "  -q       no progress line\n"
     "  -z ALG   compress with ALG: any, none, brotli, lz4 or zstd\n"
     "  -Z       do not compress"},
    {"devices",
     "Lists USB devices with an ADB (or fastboot) interface, the emulators (an\n"
     "adbd on 127.0.0.1 at an odd port P from 5555 to $ADB_LOCAL_TRANSPORT_MAX_PORT,\n"
     "default 5585, is emulator-(P-1)), then the TCP targets given (arguments,\n"
     "-t, or a HOST:PORT serial), each with the state a short handshake shows,\n"
     "as `adb devices` does; no adb server is involved. --timeout bounds each\n"
     "handshake (at most 3 s); they run in parallel for the emulators.\n\n"
     "  -l       also product, model, device and transport details\n"
     "  " JSON_NOTE},
    {"track-devices",
     "The device list (the same devices as `devices`) as adb's server sends it\n"
     "to a tracker, at once and again each time it changes, until interrupted,\n"
     "as `adb track-devices`: each list is preceded by its length in 4 hex\n"
     "digits. The list is taken again every second; USB devices come first,\n"
     "then the rest by serial, as adb's server orders them.\n\n"
     "  -l       the long lines of `devices -l`, with a transport id per device\n"
     "           (kept while it is listed, a new one when it comes back)"},
    {"pair",
     "Pairs this computer's adb key with an Android 11+ device (Developer\n"
     "options > Wireless debugging > Pair device with pairing code). CODE is\n"
     "read from stdin when not given. Then connect with -t to the port the\n"
     "Wireless debugging screen shows.\n\n"
     "  --json   {\"paired\", \"guid\"}; errors as JSON"},
    {"wait-for-device",
     "Waits until the selected device (-s, ANDROID_SERIAL, else the only one)\n"
     "is in STATE, as adb's wait-for-[TRANSPORT-]STATE: TRANSPORT is usb,\n"
     "local (emulators and TCP devices) or any (the default); STATE is device,\n"
     "recovery, rescue, sideload, bootloader, or disconnect (until it is gone).\n"
     "Polls the listing every 250 ms. Exits 0 when ready, 1 on timeout.\n\n"
     "  -t SECONDS   give up after this long (default: --timeout if given, else\n"
     "               wait as long as it takes, as adb does)"},
    {"mdns",
     "mdns check: whether mDNS can be used here (adbc sends its own queries, so\n"
     "no daemon is needed; it needs a network interface with multicast up).\n"
     "mdns services: the wireless-debugging services announced on the network,\n"
     "as adb prints them: INSTANCE<TAB>SERVICE<TAB>IP:PORT, where SERVICE is\n"
     "_adb-tls-connect._tcp (connect, TLS), _adb-tls-pairing._tcp (pairing\n"
     "dialog open) or _adb._tcp (plain TCP). Connect with -s INSTANCE.\n\n"
     "  --wait MS     how long to listen (default 1000; ends sooner once every\n"
     "                service found is resolved)\n"
     "  --host-only   ask only this machine's own responder: the queries go by\n"
     "                unicast to its own addresses and never leave the machine\n"
     "                (Termux: the phone's own service, which the only-device\n"
     "                default uses)\n"
     "  " JSON_NOTE},
    {"get-state",
     "Prints the selected device's state as `adb get-state` does (device,\n"
     "recovery, rescue, sideload, bootloader), from a short handshake, and exits\n"
     "0. As with adb, a device that cannot be used is an error with exit status\n"
     "1: \"device unauthorized\", \"device offline\", \"device 'SERIAL' not found\"\n"
     "(each followed by the cause and what to do)."},
    {"features",
     "Prints the features of the selected device (its banner) that adbc-snap can\n"
     "use, one a line, as `adb features` lists those common to adb and the device:\n"
     "shell_v2, cmd, stat_v2, ls_v2, fixed_push_mkdir, abb_exec, delayed_ack,\n"
     "sendrecv_v2 and its compressions (brotli, lz4, zstd), sendrecv_v2_dry_run_send."},
    {"start-server",
     "Starts adb's server as adbc-serve --adb-server (docs/adb-server.md) unless a\n"
     "server of adb's version answers: on ADB_SERVER_SOCKET, else\n"
     "tcp:127.0.0.1:5037 (ANDROID_ADB_SERVER_PORT), holding the device named by\n"
     "-s/-t, else every device `devices` lists. Its log is adb-server.log in the\n"
     "session directory ($XDG_RUNTIME_DIR/adbc)."},
    {"kill-server",
     "Stops the adb server answering at ADB_SERVER_SOCKET (else\n"
     "tcp:127.0.0.1:5037) with host:kill, adbc-serve's or adb's own, and waits\n"
     "until it is gone. Nothing answering is not an error, as with adb."},
    {"get-serialno",
     "Prints the selected device's serial as adb lists it (the USB serial,\n"
     "emulator-N, HOST:PORT)."},
    {"snapshot",
     "The screen as an indented outline with [ref=N] markers on what can be\n"
     "acted on; the refs are saved for the device, so later `tap N` etc. act on\n"
     "this snapshot's elements.\n\n"
     "  --json      the snapshot as JSON; errors as JSON too\n"
     "  --xml FILE  read a saved uiautomator dump instead of a device\n"
     "  -o FILE     write the output to FILE"},
    {"find",
     "Takes a snapshot and prints the refs of the elements matching every\n"
     "selector given (and saves the refs for acts).\n\n"
     "  --id ID / --text T / --desc D / --class C   what to match\n"
     "  --contains   substring match      --nocase   ignore case\n"
     "  " JSON_NOTE},
    {"wait-text",
     "Snapshots until TEXT is on the screen (--gone: until it is not), for at\n"
     "most -t SECONDS (default 10). Exit status 1 on timeout.\n\n"
     "  --snapshot   print the snapshot that satisfied the wait\n"
     "  --json       the same, as JSON (errors as JSON too)"},
    {"wait-state",
     "Snapshots until the element REF (of the last snapshot) is in STATE:\n"
     "checked, unchecked, enabled, disabled, focused, unfocused, selected or\n"
     "unselected; -t SECONDS bounds it (default 10).\n\n"
     "  --snapshot   print the snapshot that satisfied the wait\n"
     "  --json       the same, as JSON (errors as JSON too)"},
    {"wait-stable",
     "Snapshots until two in a row are the same (the screen has settled), for at\n"
     "most -t SECONDS (default 10).\n\n"
     "  --snapshot   print the last snapshot\n"
     "  --json       the same, as JSON (errors as JSON too)"},
    {"tap",
     "Taps the centre of element REF of the last snapshot. The act is verified\n"
     "first: a fresh dump must still show the element (in place, or moved but\n"
     "unmistakable), else nothing is sent and the exit status is 3 (take a new\n"
     "snapshot).\n\n"
     "tap --text T | --id ID | --desc D taps the one element a selector names in\n"
     "a fresh snapshot (whose refs are saved), tried in five tiers: the exact\n"
     "resource-id, a control's own text, a label inside a clickable parent,\n"
     "content-desc, an editable field showing the text. Several matches are\n"
     "refused with the candidates listed and exit status 3; none is status 1.\n\n"
     "Every act takes:\n"
     "  --snapshot    print the screen after the act (and save its refs)\n"
     "  --json        the same as JSON; errors as JSON too\n"
     "  --settle MS   wait before that snapshot (default 0: the dump waits for an idle UI)\n"
     "  --no-verify   act on the saved coordinates without checking"},
    {"tap-xy", "Taps the point X Y (pixels). Takes the options of `tap`."},
    {"tap-grid",
     "Taps the centre of a cell of the screen's grid (see `grid`), such as C5.\n"
     "Takes the options of `tap`."},
    {"grid",
     "Prints the screen's grid: ten columns A-J and near-square rows, with the\n"
     "pixel bounds of each cell, for tapping where no element has a ref.\n\n"
     "  " JSON_NOTE},
    {"type",
     "Focuses element REF and types TEXT (any Unicode; what `input text` cannot\n"
     "carry is sent another way). Use -- before TEXT that starts with \"-\".\n\n"
     "  --clear   clear the field first\n"
     "Takes the options of `tap`."},
    {"press",
     "Presses a key by name (back, home, enter, del, tab, menu, ...) or by its\n"
     "Android key code. Takes the options of `tap`."},
    {"swipe", "Swipes from X1 Y1 to X2 Y2 in MS milliseconds (default 300). Takes the\n"
              "options of `tap`."},
    {"scroll",
     "Scrolls inside element REF by most of its size in DIR: up, down, left or\n"
     "right (the content moves the other way). Takes the options of `tap`."},
    {"long-press", "Holds on element REF for a second. Takes the options of `tap`."},
    {"back", "Presses the back key. Takes the options of `tap`."},
    {"home", "Presses the home key. Takes the options of `tap`."},
    {"screenshot",
     "A PNG of the screen: raw pixels from screencap, encoded here (faster than\n"
     "encoding on the device). Written atomically to FILE, or to stdout when it\n"
     "is not a terminal.\n\n"
     "  -o FILE           where to write (\"-\": stdout)\n"
     "  --png-on-device   let the device encode (screencap -p)\n"
     "  --raw             insist on raw pixels\n"
     "  --json            print {\"path\", \"width\", \"height\", \"bytes\"} (needs -o)"},
    {"launch", "Starts the launcher activity of package PKG.\n\n"
               "  --json   {\"ok\": true, ...}; errors as JSON"},
    {"intent",
     "Starts an activity with an intent (am start): an ACTION, a --data URI\n"
     "and/or a --component PKG/CLASS, with extras --es KEY STRING,\n"
     "--ei KEY INT, --ez KEY true|false (each may repeat).\n\n"
     "  --json   {\"ok\": true, ...}; errors as JSON"},
    {"stop", "Force-stops package PKG.\n\n  --json   {\"ok\": true, ...}; errors as JSON"},
    {"top",
     "The resumed activity and the focused package.\n\n"
     "  " JSON_NOTE},
    {"install",
     "Installs APK (streamed into `cmd package install` when the device can,\n"
     "through abb_exec where it has it, else pushed to /data/local/tmp and\n"
     "installed with pm), with pm install's\n"
     "flags as adb passes them (checked here: an unknown one sends nothing).\n\n"
     "  -r  replace an installed app     -t  allow test packages\n"
     "  -d  allow a lower version code   -g  grant every runtime permission\n"
     "  -l  forward-lock (old devices)   -s  on shared storage (old devices)\n"
     "  --instant    as an instant app\n"
     "  --user USER  for one user: an id, all or current\n"
     "  --json   {\"ok\": true, ...}; errors as JSON"},
    {"install-multiple",
     "Installs one app from several files (a base APK and its splits, .dm,\n"
     "...) in one package-installer session as adb does: install-create with\n"
     "the flags and the total size, install-write per file streamed on stdin,\n"
     "install-commit (install-abandon when a write fails). Flags as install's.\n\n"
     "  --json   {\"ok\": true, ...}; errors as JSON"},
    {"uninstall",
     "Removes package PKG. -k (keep the data) is refused as adb refuses it: the\n"
     "data left could not be removed later; `adbc-snap shell cmd package\n"
     "uninstall -k PKG` does it anyway.\n\n"
     "  --json   {\"ok\": true, ...}; errors as JSON"},
    {"apps",
     "The packages with a launcher activity (pm query-activities --components for\n"
     "MAIN/LAUNCHER), sorted, one a line; launch takes them. No labels: the device\n"
     "gives them only per package.\n\n"
     "  --json   {\"apps\": [...]}; errors as JSON"},
    {"open-url",
     "Opens URL in its app: am start -a android.intent.action.VIEW -d URL. Only\n"
     "http and https, printable ASCII without blanks or any of ;$`\\\"'<>|{}^\n"
     "(percent-encode them); a refused URL sends nothing.\n\n"
     "  --json   {\"ok\": true, ...}; errors as JSON"},
    {"screen-info",
     "The screen: wm size and wm density (the overrides when set, the physical\n"
     "values beside them), and settings system accelerometer_rotation and\n"
     "user_rotation.\n\n"
     "  " JSON_NOTE},
    {"rotate",
     "Locks the rotation at 0, 90, 180 or 270 degrees: auto-rotate off and\n"
     "user_rotation set, the settings as they were kept on the device first\n"
     "(once). restore puts them back.\n\n"
     "  --json   {\"ok\": true, ...}; errors as JSON"},
    {"record",
     "Records the screen for SECONDS (1..180, screenrecord's bound; Ctrl-C stops\n"
     "sooner) with screenrecord --time-limit, then pulls the MP4 to FILE and\n"
     "removes it from the device.\n\n"
     "  --json   {\"ok\": true, \"path\", \"bytes\"}; errors as JSON"},
    {"crashlog",
     "The crash buffer's last lines (logcat -b crash -d -t N, --lines, default\n"
     "200) and the crash, ANR and tombstone entries of dumpsys dropbox, newest\n"
     "first (--entries, default 20).\n\n"
     "  --json   {\"text\": ...}; errors as JSON"},
    {"shade",
     "Opens or closes the notification shade: cmd statusbar expand-notifications\n"
     "or collapse.\n\n"
     "  --json   {\"ok\": true, ...}; errors as JSON"},
    {"getprop",
     "One system property (its value), or all of them as getprop prints them.\n\n"
     "  --json   {\"NAME\": \"value\", ...} (one or all); errors as JSON"},
    {"logcat",
     "The device's logcat with adb's arguments: each one goes to logcat on the\n"
     "device as `adb logcat` passes it (quoted, with ANDROID_LOG_TAGS exported),\n"
     "so -d (dump and exit), -c (clear), -t N (the last N lines), -T N, -v FORMAT,\n"
     "-b BUFFER, -s and filter specs such as '*:E' mean what they mean there, and\n"
     "an option logcat does not know is logcat's own error. Without -d, -t or -c\n"
     "logcat follows the log until interrupted, as with adb. Exits with logcat's\n"
     "status. adbc's own options (anywhere before --; after -- everything goes to\n"
     "logcat):\n\n"
     "  --for SECONDS  follow the log for this long, then stop (exit 0)\n"
     "  --json         {\"lines\": [...]}, one string a line (bytes that are not\n"
     "                 UTF-8 as U+FFFD); needs a log that ends: -d, -t N or --for"},
    {"session",
     "session start: start a background adbc-serve holding the selected device's\n"
     "connection (-s SERIAL or -t HOST:PORT), answering on a unix socket in\n"
     "$XDG_RUNTIME_DIR/adbc/ (0600, our uid only). While it runs every adbc-snap\n"
     "command for that device goes through it: no handshake with the device,\n"
     "the same output and exit status. --no-session (before the command)\n"
     "connects directly; `info` always does.\n"
     "session stop: stop it. session status: whether one runs (exit 0) or not\n"
     "(exit 1). A session file no server answers is stale: it is removed.\n"
     "The server exits on its own once its device has been gone and no command\n"
     "has used it for 10 minutes (ADBC_SESSION_IDLE_EXIT=SECONDS; 0: never)."},
    {"help",
     "Shows the help of a command (the same as `adbc-snap COMMAND --help`), or\n"
     "with no COMMAND the list of commands.\n\n"
     "  --commands   the command names, one a line (for shell completion)"},
    {NULL, NULL},
};

const char *snap_help_text(const char *name)
{
    for (const snap_help *h = help_table; h->name; h++)
        if (strcmp(h->name, name) == 0)
            return h->text;
    return NULL;
}

const char *snap_help_orphan(void)
{
    for (const snap_help *h = help_table; h->name; h++)
        if (!snap_cmd_find(h->name))
            return h->name;
    return NULL;
}

int snap_help_show(const snap_cmd *cmd)
{
    const char *text = snap_help_text(cmd->name);
    if (!text) {
        fprintf(stderr,
                "adbc-snap: no help for \"%s\" (add its entry to tools/adbc-snap/help.c)\n",
                cmd->name);
        return SNAP_EXIT_FAIL;
    }
    printf("usage: adbc-snap [-s SERIAL | -t HOST:PORT] [--timeout SECONDS] [-q] %s\n\n"
           "%s.\n\n%s\n",
           cmd->usage, cmd->help, text);
    return 0;
}

static int cmd_help(snap_ctx *ctx, int argc, char **argv)
{
    (void)ctx;
    if (argc == 1) {
        snap_usage_all(stdout);
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "--commands") == 0) {
        for (size_t t = 0; t < snap_ntables; t++)
            for (const snap_cmd *c = snap_tables[t]; c->name; c++)
                printf("%s\n", c->name);
        return 0;
    }
    if (argc != 2 || argv[1][0] == '-')
        return snap_usage(&snap_cmds_help[0], "give one command name");
    const snap_cmd *c = snap_cmd_find(argv[1]);
    if (!c) {
        fprintf(stderr, "adbc-snap: unknown command \"%s\" (see adbc-snap --help)\n", argv[1]);
        return SNAP_EXIT_USAGE;
    }
    return snap_help_show(c);
}

const snap_cmd snap_cmds_help[] = {
    {"help", cmd_help, "help [COMMAND | --commands]", "what a command does and its options"},
    {NULL, NULL, NULL, NULL},
};
