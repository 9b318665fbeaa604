#!/usr/bin/env python3
"""Regenerates groups_golden.json for package ofptext from Debian's ovs-ofctl.

Each line of groups.txt is "COMMAND|OPTIONS|ARGUMENT" or, without an
argument, "COMMAND|OPTIONS"; for add-groups the argument is the file's
text with "\\n" between lines.
ovs-ofctl runs the command against a fake switch on a Unix socket that
answers hellos, echoes, barriers and multipart requests (with empty
replies) and records every other message ovs-ofctl sends. The golden
entry holds the arguments, exit status, stdout/stderr (log lines
dropped), the messages sent, in hex, and what `ovs-ofctl ofp-print`
prints for each.
"""
import json, os, re, socket, struct, subprocess, sys, tempfile, threading

HERE = os.path.dirname(os.path.abspath(__file__))
VLOG = re.compile(r'^\d{4}-\d\d-\d\dT[0-9:.]+Z\|\d+\|')


def recv_msg(c):
    hdr = b''
    while len(hdr) < 8:
        d = c.recv(8 - len(hdr))
        if not d:
            return None
        hdr += d
    n = struct.unpack('!H', hdr[2:4])[0]
    body = b''
    while len(body) < n - 8:
        d = c.recv(n - 8 - len(body))
        if not d:
            return None
        body += d
    return hdr + body


def serve(sock, sent, stop):
    sock.settimeout(0.1)
    while not stop.is_set():
        try:
            c, _ = sock.accept()
        except OSError:
            continue
        c.settimeout(10)
        with c:
            # Our hello: OpenFlow 1.5 with a bitmap of 1.0 to 1.5.
            c.sendall(struct.pack('!BBHI', 6, 0, 16, 0) + struct.pack('!HHI', 1, 8, 0x7e))
            while True:
                m = recv_msg(c)
                if m is None:
                    break
                v, t, _, xid = struct.unpack('!BBHI', m[:8])
                if t == 0:
                    continue
                if t == 2:
                    c.sendall(struct.pack('!BBHI', v, 3, len(m), xid) + m[8:])
                    continue
                if (v == 1 and t == 18) or (v > 1 and t == 20):
                    c.sendall(struct.pack('!BBHI', v, t + 1, 8, xid))
                    continue
                if (v == 1 and t == 16) or (v > 1 and t == 18):
                    sent.append(m.hex())
                    st = struct.unpack('!H', m[8:10])[0]
                    n = (12 if v == 1 else 16) + (12 if st == 0xffff else 0)
                    r = bytearray(m[:n])
                    r[1] = t + 1
                    r[2:4] = struct.pack('!H', n)
                    c.sendall(bytes(r))
                    continue
                sent.append(m.hex())


def run_case(cmd, opts, arg, tmp):
    path = os.path.join(tmp, 'sw.sock')
    if os.path.exists(path):
        os.unlink(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(path)
    sock.listen(4)
    sent = []
    stop = threading.Event()
    th = threading.Thread(target=serve, args=(sock, sent, stop))
    th.start()
    args = ['ovs-ofctl', '--no-names', '--timeout=5'] + opts + [cmd, 'unix:' + path]
    if arg is not None:
        if cmd == 'add-groups':
            fn = os.path.join(tmp, 'groups.txt')
            with open(fn, 'w') as f:
                f.write(arg.replace('\\n', '\n') + '\n')
            args.append(fn)
        else:
            args.append(arg)
    p = subprocess.run(args, capture_output=True, text=True)
    stop.set()
    th.join()
    sock.close()
    err = ''.join(l for l in p.stderr.splitlines(True) if not VLOG.match(l))
    err = err.replace(path, 'SWITCH').replace(os.path.join(tmp, 'groups.txt'), 'FILE')
    out = p.stdout.replace(path, 'SWITCH')
    prints = [subprocess.run(['ovs-ofctl', 'ofp-print', h], capture_output=True, text=True).stdout for h in sent]
    return {'cmd': cmd, 'opts': opts, 'arg': arg, 'rc': p.returncode, 'stdout': out, 'stderr': err,
            'sent': sent, 'print': prints}


def main():
    cases = []
    with open(os.path.join(HERE, 'groups.txt')) as f:
        for line in f:
            line = line.rstrip('\n')
            if not line or line.startswith('#'):
                continue
            parts = line.split('|', 2)
            cmd, opts = parts[0], parts[1].split()
            arg = parts[2] if len(parts) > 2 else None
            cases.append((cmd, opts, arg))
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for cmd, opts, arg in cases:
            out.append(run_case(cmd, opts, arg, tmp))
    with open(os.path.join(HERE, 'groups_golden.json'), 'w') as f:
        json.dump(out, f, indent=1)
        f.write('\n')


if __name__ == '__main__':
    main()
